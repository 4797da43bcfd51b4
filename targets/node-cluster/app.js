// One node-cluster worker: the Fastify app, with its own connection to the shared SQLite file that
// the primary (server.js) created and seeded. The contract is docs/contract.md.
import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import { readFile, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as wait } from 'node:timers/promises';
import v8 from 'node:v8';

import fastifyView from '@fastify/view';
import ejs from 'ejs';
import Fastify from 'fastify';

import { countPrimes, enrich, fib, Lru, matrixTrace, monteCarloPi, validateReading } from './work.js';

const PORT = Number(process.env.PORT ?? 8080);
const DOWNSTREAM_URL = process.env.DOWNSTREAM_URL || `http://127.0.0.1:${PORT}/downstream`;
const HERE = import.meta.dirname;

// ---- database: node:sqlite, this worker's connection to the shared WAL file, statements prepared once ----
// Workers are processes, so an in-memory database would be one per worker and /stats would count
// only the answering worker's rows. One file in WAL mode: one writer at a time, readers never blocked.
const db = new DatabaseSync(process.env.DB_FILE);
// A writer that finds the write lock taken waits up to 5 s instead of failing with SQLITE_BUSY.
db.exec('PRAGMA busy_timeout = 5000');
// WAL's usual setting: no fsync per commit, only at checkpoints (the contract's database is
// in-memory elsewhere; durability is not what is measured).
db.exec('PRAGMA synchronous = NORMAL');
const insertReading = db.prepare('INSERT INTO readings (device_id, ts, payload) VALUES (?, ?, ?)');
const selectPage = db.prepare('SELECT id, device_id, ts, payload FROM readings ORDER BY id DESC LIMIT 50');
const selectLatest10 = db.prepare('SELECT id, device_id, ts FROM readings ORDER BY id DESC LIMIT 10');
const countReadings = db.prepare('SELECT COUNT(*) AS n FROM readings');

const insert = (deviceId, ts, payload) => Number(insertReading.run(deviceId, ts, payload).lastInsertRowid);

// ---- the standard reading, the enterprise reading (the primary stored the 50 seeds) ----
const standard = JSON.parse(readFileSync(join(HERE, 'iot-reading.json'), 'utf8'));
const enterpriseReading = { ...standard, deviceId: 'enterprise' };
const enterprisePayload = JSON.stringify(enterpriseReading);

const cache = new Lru(1000);
const health = {
  status: 'UP',
  runtime: 'node',
  version: process.versions.node,
  framework: 'fastify',
  frameworkVersion: null, // set once the app exists
  threadModel: 'cluster: one process and event loop per worker',
  availableProcessors: os.availableParallelism(),
  workers: Number(process.env.CLUSTER_WORKERS),
  worker: cluster.worker.id,
  pid: process.pid,
  maxHeapBytes: v8.getHeapStatistics().heap_size_limit, // this worker's; every worker has the same
  gc: null,
};

// ---- the app ----
const app = Fastify({
  logger: false,
  // Idle keep-alive connections stay open 65 s (Node's own default is 5 s): the load generator
  // reuses its connections across pauses between phases. Node never closes a connection after
  // N requests (maxRequestsPerSocket = 0).
  keepAliveTimeout: 65_000,
  bodyLimit: 1 << 20, // 1 MiB: the payload sweep goes up to 256 KB (Fastify's default is exactly 1 MiB; stated, not assumed)
});
health.frameworkVersion = app.version;

// JSON bodies: Fastify's own parser (secure-json-parse), but keep the text as received, which is
// what the contract stores in `payload`.
const parseJson = app.getDefaultJsonParser('error', 'ignore');
app.removeContentTypeParser('application/json');
app.decorateRequest('rawBody', null);
app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
  request.rawBody = body;
  parseJson(request, body, done);
});

app.register(fastifyView, {
  engine: { ejs },
  root: join(HERE, 'views'),
  production: true, // compile each template once and cache it
});

app.setErrorHandler((error, request, reply) => {
  const status = error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
  reply.code(status).send({ error: error.message });
});
app.setNotFoundHandler((request, reply) => {
  reply.code(404).send({ error: `no route ${request.method} ${request.url}` });
});

class BadRequest extends Error {
  statusCode = 400;
}

app.get('/health', async () => health);

app.post('/ingest', async (request) => {
  const start = performance.now();
  const body = request.body;
  const problem = validateReading(body);
  if (problem) throw new BadRequest(problem);
  const id = insert(body.deviceId, body.timestamp, request.rawBody);
  await wait(50);
  return { id, processingMs: performance.now() - start };
});

app.post('/ingest/fast', async (request) => {
  const body = request.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new BadRequest('body must be a JSON object');
  }
  return { id: insert(body.deviceId, body.timestamp, request.rawBody) };
});

app.post('/ingest/realistic', async (request) => {
  const start = performance.now();
  const body = request.body;
  const problem = validateReading(body);
  if (problem) throw new BadRequest(problem);
  const id = insert(body.deviceId, body.timestamp, request.rawBody);
  const { mean, min, max, stddev } = enrich(body);
  const pi = monteCarloPi(10_000);
  return { id, processingMs: performance.now() - start, mean, min, max, stddev, pi };
});

app.get('/cpu', async () => ({
  pi: monteCarloPi(1_000_000),
  trace: matrixTrace(),
  primes: countPrimes(100_000),
}));

app.get('/blocking', async (request) => {
  const raw = request.query.ms;
  let ms = 500;
  if (raw !== undefined) {
    ms = /^\d{1,5}$/.test(raw) ? Number(raw) : NaN;
    if (!(ms >= 0 && ms <= 10_000)) throw new BadRequest('ms must be an integer from 0 to 10000');
  }
  await wait(ms);
  return { waitedMs: ms };
});

app.get('/page', async (request, reply) => {
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
  return reply.viewAsync('page.ejs', { readings });
});

app.post(
  '/process-data',
  {
    schema: {
      body: {
        type: 'object',
        required: ['n'],
        properties: { n: { type: 'integer', minimum: 1, maximum: 35 } },
      },
    },
  },
  async (request) => {
    const { n } = request.body;
    return { n, result: fib(n) };
  },
);

app.get('/enterprise', async () => {
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
  return { id, rows: rows.length, bytes, downstream: downstreamBody?.ok === true, cacheHit };
});

app.get('/downstream', async () => {
  await wait(20);
  return { ok: true };
});

app.get('/stats', async () => ({ rows: countReadings.get().n }));

// ---- start and stop ----
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

await app.listen({ port: PORT, host: '127.0.0.1' });
console.log(`worker ${cluster.worker.id}: fastify ${app.version} on node ${health.version} listening on 127.0.0.1:${PORT} (started in ${Math.round(process.uptime() * 1000)} ms)`);
