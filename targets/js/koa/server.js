// iotbench target: Koa 3 on Node 24 LTS. One process, one event loop.
// The contract is docs/contract.md at the root of the repository.
import { createRequire } from 'node:module';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';

import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import views from '@ladjs/koa-views';
import Koa from 'koa';

import { openReadings } from '../contract/db.js';
import { enterprise } from '../contract/enterprise.js';
import { fanOut } from '../contract/fanout.js';
import { nodeServer, servedProtocol } from '../contract/protocol.js';
import { startSignals } from '../contract/signals.js';
import { countPrimes, enrich, fib, Lru, matrixTrace, monteCarloPi, sleep, validateReading } from '../contract/work.js';

const PORT = Number(process.env.PORT ?? 8080);
// The address it listens on: loopback, unless a run on a remote Docker engine names that host's (docs/scale.md).
const BIND_ADDRESS = process.env.BIND_ADDRESS || '127.0.0.1';
const DOWNSTREAM_URL = process.env.DOWNSTREAM_URL || `http://127.0.0.1:${PORT}/downstream`;
const VIEWS = join(import.meta.dirname, '..', 'contract', 'views');

// ---- database: node:sqlite in memory, or PostgreSQL (DATABASE_URL); the 50 seeds, statements
// prepared once (contract/db.js). Its calls answer values or promises: every one is awaited. ----
const readings = openReadings();
await readings.ready;

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
  const id = await readings.insert(body.deviceId, body.timestamp, ctx.request.rawBody);
  await sleep(50);
  ctx.body = { id, processingMs: performance.now() - start };
});

router.post('/ingest/fast', async (ctx) => {
  const body = ctx.request.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    ctx.throw(400, 'body must be a JSON object');
  }
  ctx.body = { id: await readings.insert(body.deviceId, body.timestamp, ctx.request.rawBody) };
});

router.post('/ingest/realistic', async (ctx) => {
  const start = performance.now();
  const body = ctx.request.body;
  const problem = validateReading(body);
  if (problem) ctx.throw(400, problem);
  const id = await readings.insert(body.deviceId, body.timestamp, ctx.request.rawBody);
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
  await sleep(ms);
  ctx.body = { waitedMs: ms };
});

router.get('/page', async (ctx) => {
  await ctx.render('page', { readings: await readings.page() });
});

router.post('/process-data', (ctx) => {
  const n = ctx.request.body?.n;
  if (!Number.isInteger(n) || n < 1 || n > 40) ctx.throw(400, 'n must be an integer from 1 to 40');
  ctx.body = { n, result: fib(n) };
});

router.get('/enterprise', async (ctx) => {
  ctx.body = await enterprise(readings, cache, DOWNSTREAM_URL);
});

router.get('/downstream', async (ctx) => {
  await sleep(20);
  ctx.body = { ok: true };
});

router.get('/fanout', async (ctx) => {
  ctx.body = await fanOut();
});

router.get('/stats', async (ctx) => {
  ctx.body = { rows: await readings.count() };
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
app.use(views(VIEWS, { extension: 'pug', options: { cache: true } }));
app.use(router.routes());

// ---- start and stop ----
// app.callback() is a request listener for node:http, node:https and node:http2 alike (Koa's docs:
// "the same application" on several servers); app.listen is node:http's shorthand.
const PROTOCOL = servedProtocol(['http1', 'https', 'h2', 'h2c']);
// GET /signals on SIGNALS_PORT, when set: its own node:http server, not this app's.
await startSignals();
const server = nodeServer(PROTOCOL, app.callback());
server.listen(PORT, BIND_ADDRESS, () => {
  console.log(`koa on node ${process.versions.node} serving ${PROTOCOL} on ${BIND_ADDRESS}:${PORT} (started in ${Math.round(process.uptime() * 1000)} ms)`);
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
