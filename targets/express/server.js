// iotbench target: Express 5 on Node 24 LTS. One process, one event loop.
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

import express from 'express';

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
  framework: 'express',
  frameworkVersion: createRequire(import.meta.url)('express/package.json').version,
  threadModel: 'event-loop',
  availableProcessors: os.availableParallelism(),
  workers: 1,
  maxHeapBytes: v8.getHeapStatistics().heap_size_limit,
  gc: null,
};

class BadRequest extends Error {
  status = 400;
}

// ---- the app ----
const app = express();
app.disable('x-powered-by');
app.set('views', join(HERE, 'views'));
app.set('view engine', 'ejs'); // view cache is on because NODE_ENV=production

// express.json (body-parser): 1 MB limit for the payload sweep (its default, 100 KB, is below a
// 256 KB reading). `verify` keeps the body as received, which the contract stores in `payload`.
app.use(
  express.json({
    limit: '1mb',
    verify: (req, res, buf) => {
      req.rawBody = buf.toString('utf8');
    },
  }),
);

app.get('/health', (req, res) => {
  res.json(health);
});

app.post('/ingest', async (req, res) => {
  const start = performance.now();
  const body = req.body;
  const problem = validateReading(body);
  if (problem) throw new BadRequest(problem);
  const id = insert(body.deviceId, body.timestamp, req.rawBody);
  await wait(50);
  res.json({ id, processingMs: performance.now() - start });
});

app.post('/ingest/fast', (req, res) => {
  const body = req.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new BadRequest('body must be a JSON object');
  }
  res.json({ id: insert(body.deviceId, body.timestamp, req.rawBody) });
});

app.post('/ingest/realistic', (req, res) => {
  const start = performance.now();
  const body = req.body;
  const problem = validateReading(body);
  if (problem) throw new BadRequest(problem);
  const id = insert(body.deviceId, body.timestamp, req.rawBody);
  const { mean, min, max, stddev } = enrich(body);
  const pi = monteCarloPi(10_000);
  res.json({ id, processingMs: performance.now() - start, mean, min, max, stddev, pi });
});

app.get('/cpu', (req, res) => {
  res.json({ pi: monteCarloPi(1_000_000), trace: matrixTrace(), primes: countPrimes(100_000) });
});

app.get('/blocking', async (req, res) => {
  const raw = req.query.ms;
  let ms = 500;
  if (raw !== undefined) {
    ms = typeof raw === 'string' && /^\d{1,5}$/.test(raw) ? Number(raw) : NaN;
    if (!(ms >= 0 && ms <= 10_000)) throw new BadRequest('ms must be an integer from 0 to 10000');
  }
  await wait(ms);
  res.json({ waitedMs: ms });
});

app.get('/page', (req, res) => {
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
  res.render('page', { readings });
});

app.post('/process-data', (req, res) => {
  const n = req.body?.n;
  if (!Number.isInteger(n) || n < 1 || n > 35) throw new BadRequest('n must be an integer from 1 to 35');
  res.json({ n, result: fib(n) });
});

app.get('/enterprise', async (req, res) => {
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
  res.json({ id, rows: rows.length, bytes, downstream: downstreamBody?.ok === true, cacheHit });
});

app.get('/downstream', async (req, res) => {
  await wait(20);
  res.json({ ok: true });
});

app.get('/stats', (req, res) => {
  res.json({ rows: countReadings.get().n });
});

// Unknown routes, then every error (Express 5 forwards rejected promises and throws here):
// {"error": message}, with the 4xx status body-parser or a handler gave, else 500.
app.use((req, res) => {
  res.status(404).json({ error: `no route ${req.method} ${req.originalUrl}` });
});
app.use((err, req, res, next) => {
  const status = err.status >= 400 && err.status < 500 ? err.status : 500;
  res.status(status).json({ error: err.message });
});

// ---- start and stop ----
const server = app.listen(PORT, '127.0.0.1', (error) => {
  if (error) throw error;
  console.log(`express on node ${process.versions.node} listening on 127.0.0.1:${PORT} (started in ${Math.round(process.uptime() * 1000)} ms)`);
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
