// iotbench target: Koa 3 on Node 24 LTS. One process, one event loop.
// The contract is docs/contract.md at the root of the repository.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { readFile, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as wait } from 'node:timers/promises';
import v8 from 'node:v8';

import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import views from '@ladjs/koa-views';
import Koa from 'koa';

import { countPrimes, enrich, fib, Lru, matrixTrace, monteCarloPi, validateReading } from './work.js';

const PORT = Number(process.env.PORT ?? 8080);
const DOWNSTREAM_URL = process.env.DOWNSTREAM_URL || `http://127.0.0.1:${PORT}/downstream`;
const HERE = import.meta.dirname;

// ---- database: node:sqlite, in memory, statements prepared once ----
const db = new DatabaseSync(':memory:');
db.exec(`CREATE TABLE readings (
  id        INTEGER PRIMARY KEY AUTOINCREMENT,
  device_id VARCHAR(64) NOT NULL,
  ts        BIGINT      NOT NULL,
  payload   TEXT        NOT NULL
)`);
const insertReading = db.prepare('INSERT INTO readings (device_id, ts, payload) VALUES (?, ?, ?)');
const selectPage = db.prepare('SELECT id, device_id, ts, payload FROM readings ORDER BY id DESC LIMIT 50');
const selectLatest10 = db.prepare('SELECT id, device_id, ts FROM readings ORDER BY id DESC LIMIT 10');
const countReadings = db.prepare('SELECT COUNT(*) AS n FROM readings');

const insert = (deviceId, ts, payload) => Number(insertReading.run(deviceId, ts, payload).lastInsertRowid);

// ---- the standard reading, the 50 seeds, the enterprise reading ----
const standard = JSON.parse(readFileSync(join(HERE, 'iot-reading.json'), 'utf8'));
for (let i = 0; i < 50; i++) {
  const seed = { ...standard, deviceId: `seed-${String(i).padStart(2, '0')}`, timestamp: 1763812800000 + i };
  insert(seed.deviceId, seed.timestamp, JSON.stringify(seed));
}
const enterpriseReading = { ...standard, deviceId: 'enterprise' };
const enterprisePayload = JSON.stringify(enterpriseReading);

const cache = new Lru(1000);
const health = {
  status: 'UP',
  runtime: 'node',
  version: process.versions.node,
  framework: 'koa',
  frameworkVersion: createRequire(import.meta.url)('koa/package.json').version,
  threadModel: 'event-loop',
  availableProcessors: os.availableParallelism(),
  workers: 1,
  maxHeapBytes: v8.getHeapStatistics().heap_size_limit,
  gc: null,
};

// ---- routes ----
const router = new Router();

router.get('/health', (ctx) => {
  ctx.body = health;
});

router.post('/ingest', async (ctx) => {
  const start = performance.now();
  const body = ctx.request.body;
  const problem = validateReading(body);
  if (problem) ctx.throw(400, problem);
  const id = insert(body.deviceId, body.timestamp, ctx.request.rawBody);
  await wait(50);
  ctx.body = { id, processingMs: performance.now() - start };
});

router.post('/ingest/fast', (ctx) => {
  const body = ctx.request.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    ctx.throw(400, 'body must be a JSON object');
  }
  ctx.body = { id: insert(body.deviceId, body.timestamp, ctx.request.rawBody) };
});

router.post('/ingest/realistic', (ctx) => {
  const start = performance.now();
  const body = ctx.request.body;
  const problem = validateReading(body);
  if (problem) ctx.throw(400, problem);
  const id = insert(body.deviceId, body.timestamp, ctx.request.rawBody);
  const { mean, min, max, stddev } = enrich(body);
  const pi = monteCarloPi(10_000);
  ctx.body = { id, processingMs: performance.now() - start, mean, min, max, stddev, pi };
});

router.get('/cpu', (ctx) => {
  ctx.body = { pi: monteCarloPi(1_000_000), trace: matrixTrace(), primes: countPrimes(100_000) };
});

router.get('/blocking', async (ctx) => {
  const raw = ctx.query.ms;
  let ms = 500;
  if (raw !== undefined) {
    ms = typeof raw === 'string' && /^\d{1,5}$/.test(raw) ? Number(raw) : NaN;
    if (!(ms >= 0 && ms <= 10_000)) ctx.throw(400, 'ms must be an integer from 0 to 10000');
  }
  await wait(ms);
  ctx.body = { waitedMs: ms };
});

router.get('/page', async (ctx) => {
  const readings = selectPage.all().map((row) => {
    const reading = JSON.parse(row.payload);
    return {
      id: row.id,
      deviceId: row.device_id,
      timestamp: row.ts,
      metric01: reading.metric01,
      metric02: reading.metric02,
      metric03: reading.metric03,
    };
  });
  await ctx.render('page', { readings });
});

router.post('/process-data', (ctx) => {
  const n = ctx.request.body?.n;
  if (!Number.isInteger(n) || n < 1 || n > 35) ctx.throw(400, 'n must be an integer from 1 to 35');
  ctx.body = { n, result: fib(n) };
});

router.get('/enterprise', async (ctx) => {
  // 1. insert
  const id = insert(enterpriseReading.deviceId, enterpriseReading.timestamp, enterprisePayload);
  // 2. select the latest 10
  const rows = selectLatest10.all();
  // 3. file: write 4,096 bytes, read back, delete
  const json = JSON.stringify(rows);
  const content = json + ' '.repeat(Math.max(0, 4096 - Buffer.byteLength(json)));
  const file = join(os.tmpdir(), `iotbench-enterprise-${process.pid}-${id}.json`);
  await writeFile(file, content);
  const bytes = (await readFile(file)).length;
  await unlink(file);
  // 4. downstream call
  const response = await fetch(DOWNSTREAM_URL);
  const downstreamBody = await response.json();
  if (!response.ok) throw new Error(`downstream answered ${response.status}`);
  // 5. LRU cache
  const key = `device:${id % 100}`;
  const cacheHit = cache.get(key) !== undefined;
  if (!cacheHit) cache.set(key, rows);
  ctx.body = { id, rows: rows.length, bytes, downstream: downstreamBody?.ok === true, cacheHit };
});

router.get('/downstream', async (ctx) => {
  await wait(20);
  ctx.body = { ok: true };
});

router.get('/stats', (ctx) => {
  ctx.body = { rows: countReadings.get().n };
});

// ---- the app: error mapping, body parser, views, routes ----
const app = new Koa();
// Every error, thrown or from ctx.throw, becomes {"error": message}, with its 4xx status (bad
// JSON from the body parser, validation) or 500. Errors are answered here, so Koa's default
// handler never logs them.
app.use(async (ctx, next) => {
  try {
    await next();
    if (ctx.status === 404 && ctx.body === undefined) {
      ctx.status = 404;
      ctx.body = { error: `no route ${ctx.method} ${ctx.url}` };
    }
  } catch (error) {
    const status = error.status >= 400 && error.status < 500 ? error.status : 500;
    ctx.status = status;
    ctx.body = { error: error.message };
  }
});
// JSON only, 1 MB (its default, set here because the payload sweep reaches 256 KB). The text as
// received stays on ctx.request.rawBody, which the contract stores in `payload`.
app.use(bodyParser({ enableTypes: ['json'], jsonLimit: '1mb' }));
// koa-views + Pug, templates compiled once and cached (`cache: true`).
app.use(views(join(HERE, 'views'), { extension: 'pug', options: { cache: true } }));
app.use(router.routes());

// ---- start and stop ----
const server = app.listen(PORT, '127.0.0.1', () => {
  console.log(`koa on node ${process.versions.node} listening on 127.0.0.1:${PORT} (started in ${Math.round(process.uptime() * 1000)} ms)`);
});
// Idle keep-alive connections stay open 65 s (Node's own default is 5 s): the load generator
// reuses its connections across pauses between phases. Node never closes a connection after
// N requests (maxRequestsPerSocket = 0).
server.keepAliveTimeout = 65_000;

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    server.close((error) => process.exit(error ? 1 : 0));
  });
}
