// iotbench target: Fastify 5 on Node 24 LTS, one event loop, the CPU work of /process-data, /cpu and
// /ingest/realistic on a worker_threads pool (piscina). With WORKER_POOL=off (target node-blocking)
// the same work runs on the event loop. The contract is docs/contract.md.
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
import { Piscina } from 'piscina';

import * as tasks from './tasks.js';
import { Lru, validateReading } from './work.js';

const PORT = Number(process.env.PORT ?? 8080);
const DOWNSTREAM_URL = process.env.DOWNSTREAM_URL || `http://127.0.0.1:${PORT}/downstream`;
const HERE = import.meta.dirname;
const POOL_ON = (process.env.WORKER_POOL ?? 'on') !== 'off';
// One thread per CPU of the cpuset (sched_getaffinity, not the host's CPUs).
const POOL_THREADS = os.availableParallelism();
// Above the 100 connections of the process-data scenario, so that experiment measures queueing,
// not shedding; bounded, so an overload is answered 503 at once instead of growing latency and memory.
const POOL_MAX_QUEUE = Number(process.env.POOL_MAX_QUEUE || 256);

// ---- the CPU work: on the pool, or on the event loop ----
const pool = POOL_ON
  ? new Piscina({
      filename: new URL('./tasks.js', import.meta.url).href,
      minThreads: POOL_THREADS, // started up front and never retired: no spawn during a run
      maxThreads: POOL_THREADS,
      idleTimeout: Infinity,
      maxQueue: POOL_MAX_QUEUE,
      // FIFO: by default piscina puts a task it could not hand to a busy thread back at the *tail* of
      // the queue, which reorders waiting requests (measured on one thread: p50 70 ms, p99 2.4 s).
      stricterFIFO: true,
      // The tasks allocate almost nothing (the largest, /cpu's matrices, 240 KB): a small old space
      // per thread keeps the threads' heaps inside the container beside the main one.
      resourceLimits: { maxOldGenerationSizeMb: 64 },
    })
  : null;

class PoolFull extends Error {
  statusCode = 503;
}

/** Runs tasks[name](arg) on the pool (503 when its queue is full), or right here when it is off. */
async function work(name, arg) {
  if (!pool) return tasks[name](arg);
  if (pool.queueSize >= POOL_MAX_QUEUE) throw new PoolFull(`worker pool queue full (${POOL_MAX_QUEUE} waiting)`);
  return pool.run(arg, { name });
}

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
  framework: 'fastify',
  frameworkVersion: null, // set once the app exists
  threadModel: POOL_ON ? 'event-loop, CPU work on a worker_threads pool' : 'event-loop, CPU work on the event loop',
  availableProcessors: os.availableParallelism(),
  // Threads that run the CPU work: the pool's, or the event loop alone.
  workers: POOL_ON ? POOL_THREADS : 1,
  pool: POOL_ON ? { threads: POOL_THREADS, maxQueue: POOL_MAX_QUEUE, maxOldGenerationMbPerThread: 64 } : null,
  maxHeapBytes: v8.getHeapStatistics().heap_size_limit, // the main thread's
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
  const status = (error.statusCode >= 400 && error.statusCode < 500) || error.statusCode === 503 ? error.statusCode : 500;
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
  const { mean, min, max, stddev, pi } = await work('enrich', body);
  return { id, processingMs: performance.now() - start, mean, min, max, stddev, pi };
});

app.get('/cpu', async () => work('cpu'));

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
    return { n, result: await work('fib', n) };
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
    Promise.all([app.close(), pool?.close()]).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

await app.listen({ port: PORT, host: '127.0.0.1' });
console.log(`fastify ${app.version} on node ${health.version}, ${POOL_ON ? `pool of ${POOL_THREADS} threads` : 'no pool'}, listening on 127.0.0.1:${PORT} (started in ${Math.round(process.uptime() * 1000)} ms)`);
