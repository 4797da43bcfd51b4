// iotbench targets fastify, fastify-bun, node-cluster, node-workers and node-blocking: one Fastify 5 app,
// five process models. Alone it is one process and one event loop, on Node or on Bun. Under
// cluster.js (node-cluster) it is one of the workers, on the shared database file DB_FILE. With
// WORKER_POOL=on (node-workers) the CPU work of /process-data, /cpu and /ingest/realistic runs on a
// worker_threads pool (piscina); WORKER_POOL=off (node-blocking) names the same work on the event loop.
// The contract is docs/contract.md at the root of the repository.
import cluster from 'node:cluster';
import { createRequire } from 'node:module';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';

import fastifyView from '@fastify/view';
import ejs from 'ejs';
import Fastify from 'fastify';

import { openReadings, sqliteDriver } from '../contract/db.js';
import { enterprise } from '../contract/enterprise.js';
import { fanOut } from '../contract/fanout.js';
import { fastifyProtocolOptions, servedProtocol } from '../contract/protocol.js';
import { registerPool, startSignals } from '../contract/signals.js';
import { Lru, sleep, validateReading } from '../contract/work.js';
import * as tasks from './tasks.js';

const PORT = Number(process.env.PORT ?? 8080);
// The address it listens on: loopback, unless a run on a remote Docker engine names that host's (docs/scale.md).
const BIND_ADDRESS = process.env.BIND_ADDRESS || '127.0.0.1';
const DOWNSTREAM_URL = process.env.DOWNSTREAM_URL || `http://127.0.0.1:${PORT}/downstream`;
const VIEWS = join(import.meta.dirname, '..', 'contract', 'views');

// ---- settings: where the CPU work runs, which database ----
// Unset: the plain fastify target. on: node-workers. off: node-blocking (the seed's baseline, whose
// /health says where its work runs).
const WORKER_POOL = process.env.WORKER_POOL || undefined;
if (WORKER_POOL !== undefined && WORKER_POOL !== 'on' && WORKER_POOL !== 'off') {
  throw new Error(`WORKER_POOL=${WORKER_POOL}: give on (CPU work on a worker_threads pool), off (on the event loop), or leave it unset`);
}
const POOL_ON = WORKER_POOL === 'on';
// One thread per CPU of the cpuset (sched_getaffinity, not the host's CPUs).
const POOL_THREADS = os.availableParallelism();
// Above the 100 connections of the process-data scenario, so that experiment measures queueing,
// not shedding; bounded, so an overload is answered 503 at once instead of growing latency and memory.
const POOL_MAX_QUEUE = Number(process.env.POOL_MAX_QUEUE || 256);
// The tasks allocate almost nothing (the largest, /cpu's matrices, 240 KB): a small old space per
// thread keeps the threads' heaps inside the container beside the main one.
const POOL_THREAD_OLD_SPACE_MB = 64;

// ---- database: node:sqlite in memory, or PostgreSQL (DATABASE_URL); under node-cluster this worker's
// connection to the shared file, or its share of the pool, the primary having created the table ----
// sqlite3 (fastify-sqlite3, fastify-bun-sqlite3) is this app's own dependency, loaded only when chosen.
const readings = openReadings(process.env.DB_FILE || undefined, {
  create: !cluster.isWorker,
  share: cluster.isWorker ? Number(process.env.CLUSTER_WORKERS) : 1,
  require: createRequire(import.meta.url),
});
await readings.ready;

// ---- the CPU work: on the pool, or on the event loop ----
// piscina is loaded only when the pool is on: the other four targets never load it.
const pool = POOL_ON
  ? new (await import('piscina')).Piscina({
      filename: new URL('./tasks.js', import.meta.url).href,
      minThreads: POOL_THREADS, // started up front and never retired: no spawn during a run
      maxThreads: POOL_THREADS,
      idleTimeout: Infinity,
      maxQueue: POOL_MAX_QUEUE,
      // FIFO: by default piscina puts a task it could not hand to a busy thread back at the *tail* of
      // the queue, which reorders waiting requests (measured on one thread: p50 70 ms, p99 2.4 s).
      stricterFIFO: true,
      resourceLimits: { maxOldGenerationSizeMb: POOL_THREAD_OLD_SPACE_MB },
    })
  : null;

// GET /signals (SIGNALS_PORT): the pool as `workers`, busy = tasks running, waiting = tasks queued. Its
// threads' event loops are not summed with the main one: piscina's threads wait for a task in
// Atomics.wait (its default, atomics: 'sync'), inside a callback, so an idle thread's loop reads busy.
let poolTasks = 0;
if (pool) registerPool('workers', 'workers', () => ({ size: POOL_THREADS, busy: poolTasks - pool.queueSize, waiting: pool.queueSize }));

class PoolFull extends Error {
  statusCode = 503;
}

/** Runs tasks[name](arg) on the pool (503 when its queue is full), or right here when there is none. */
async function work(name, arg) {
  if (!pool) return tasks[name](arg);
  if (pool.queueSize >= POOL_MAX_QUEUE) throw new PoolFull(`worker pool queue full (${POOL_MAX_QUEUE} waiting)`);
  poolTasks++;
  try {
    return await pool.run(arg, { name });
  } finally {
    poolTasks--;
  }
}

const cache = new Lru(1000);
// The same file runs on Node and on Bun (fastify-bun). Bun sets process.versions.node to the Node
// version it imitates, so it is told apart by its own global. Bun (JavaScriptCore) has no heap ceiling
// to report: its GC sizes itself from the cgroup memory limit (see README.md).
const onBun = typeof Bun !== 'undefined';
const threadModel = cluster.isWorker
  ? 'cluster: one process and event loop per worker'
  : POOL_ON
    ? 'event-loop, CPU work on a worker_threads pool'
    : WORKER_POOL === 'off'
      ? 'event-loop, CPU work on the event loop'
      : 'event-loop';
const health = {
  status: 'UP',
  runtime: onBun ? 'bun' : 'node',
  version: onBun ? Bun.version : process.versions.node,
  framework: 'fastify',
  frameworkVersion: null, // set once the app exists
  threadModel,
  availableProcessors: os.availableParallelism(),
  // Processes or threads that serve requests (node-cluster), or that run the CPU work (node-workers).
  workers: cluster.isWorker ? Number(process.env.CLUSTER_WORKERS) : POOL_ON ? POOL_THREADS : 1,
  // The store's driver (fastify and fastify-sqlite3 differ only in it): a run's record says which one.
  database: process.env.DATABASE_URL ? 'pg' : sqliteDriver(),
  ...(cluster.isWorker && { worker: cluster.worker.id, pid: process.pid }),
  ...(WORKER_POOL && {
    pool: POOL_ON ? { threads: POOL_THREADS, maxQueue: POOL_MAX_QUEUE, maxOldGenerationMbPerThread: POOL_THREAD_OLD_SPACE_MB } : null,
  }),
  // This process's (main thread's) ceiling; under node-cluster every worker has the same.
  maxHeapBytes: onBun ? null : v8.getHeapStatistics().heap_size_limit,
  gc: null,
};

// ---- the app ----
// Fastify serves every protocol itself, on Node's (and Bun's) node:https and node:http2.
const PROTOCOL = servedProtocol(['http1', 'https', 'h2', 'h2c']);
const app = Fastify({
  ...fastifyProtocolOptions(PROTOCOL),
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
  root: VIEWS,
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
  const id = await readings.insert(body.deviceId, body.timestamp, request.rawBody);
  await sleep(50);
  return { id, processingMs: performance.now() - start };
});

app.post('/ingest/fast', async (request) => {
  const body = request.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new BadRequest('body must be a JSON object');
  }
  return { id: await readings.insert(body.deviceId, body.timestamp, request.rawBody) };
});

app.post('/ingest/realistic', async (request) => {
  const start = performance.now();
  const body = request.body;
  const problem = validateReading(body);
  if (problem) throw new BadRequest(problem);
  // The database is this thread's: the insert stays here, the statistics and monteCarloPi may not.
  const id = await readings.insert(body.deviceId, body.timestamp, request.rawBody);
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
  await sleep(ms);
  return { waitedMs: ms };
});

app.get('/page', async (request, reply) => reply.viewAsync('page.ejs', { readings: await readings.page() }));

app.post(
  '/process-data',
  {
    schema: {
      body: {
        type: 'object',
        required: ['n'],
        properties: { n: { type: 'integer', minimum: 1, maximum: 40 } },
      },
    },
  },
  async (request) => {
    const { n } = request.body;
    return { n, result: await work('fib', n) };
  },
);

app.get('/enterprise', async () => enterprise(readings, cache, DOWNSTREAM_URL));

app.get('/downstream', async () => {
  await sleep(20);
  return { ok: true };
});

app.get('/fanout', () => fanOut());

app.get('/stats', async () => ({ rows: await readings.count() }));

// ---- start and stop ----
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    Promise.all([app.close(), pool?.close(), readings.close()]).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

// GET /signals on SIGNALS_PORT, when set (a node-cluster worker answers its primary instead).
await startSignals();
await app.listen({ port: PORT, host: BIND_ADDRESS });
const who = cluster.isWorker ? `worker ${cluster.worker.id}: ` : '';
console.log(`${who}fastify ${app.version} on ${health.runtime} ${health.version} (${threadModel}) serving ${PROTOCOL} on ${BIND_ADDRESS}:${PORT} (started in ${Math.round(process.uptime() * 1000)} ms)`);
