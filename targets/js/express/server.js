// iotbench target: Express 5 on Node 24 LTS. One process, one event loop.
// The contract is docs/contract.md at the root of the repository.
import { createRequire } from 'node:module';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';

import express from 'express';

import { openReadings, sqliteDriver } from '../contract/db.js';
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
// sqlite3 (express-sqlite3) is this app's own dependency, loaded only when chosen.
const readings = openReadings(undefined, { require: createRequire(import.meta.url) });
await readings.ready;

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
  database: process.env.DATABASE_URL ? 'pg' : sqliteDriver(),
  maxHeapBytes: v8.getHeapStatistics().heap_size_limit,
  gc: null,
};

class BadRequest extends Error {
  status = 400;
}

// ---- the app ----
const app = express();
app.disable('x-powered-by');
app.set('views', VIEWS);
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
  const id = await readings.insert(body.deviceId, body.timestamp, req.rawBody);
  await sleep(50);
  res.json({ id, processingMs: performance.now() - start });
});

app.post('/ingest/fast', async (req, res) => {
  const body = req.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new BadRequest('body must be a JSON object');
  }
  res.json({ id: await readings.insert(body.deviceId, body.timestamp, req.rawBody) });
});

app.post('/ingest/realistic', async (req, res) => {
  const start = performance.now();
  const body = req.body;
  const problem = validateReading(body);
  if (problem) throw new BadRequest(problem);
  const id = await readings.insert(body.deviceId, body.timestamp, req.rawBody);
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
  await sleep(ms);
  res.json({ waitedMs: ms });
});

app.get('/page', async (req, res) => {
  res.render('page', { readings: await readings.page() });
});

app.post('/process-data', (req, res) => {
  const n = req.body?.n;
  if (!Number.isInteger(n) || n < 1 || n > 40) throw new BadRequest('n must be an integer from 1 to 40');
  res.json({ n, result: fib(n) });
});

app.get('/enterprise', async (req, res) => {
  res.json(await enterprise(readings, cache, DOWNSTREAM_URL));
});

app.get('/downstream', async (req, res) => {
  await sleep(20);
  res.json({ ok: true });
});

app.get('/fanout', async (req, res) => {
  res.json(await fanOut());
});

app.get('/stats', async (req, res) => {
  res.json({ rows: await readings.count() });
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
// Express runs on node:http and node:https only: its request and response extend node:http's
// classes, which node:http2's compatibility API does not provide, so it has no h2 (README.md).
const PROTOCOL = servedProtocol(['http1', 'https']);
// GET /signals on SIGNALS_PORT, when set: its own node:http server, not this app's.
await startSignals();
const server = nodeServer(PROTOCOL, app);
server.listen(PORT, BIND_ADDRESS, () => {
  console.log(`express on node ${process.versions.node} serving ${PROTOCOL} on ${BIND_ADDRESS}:${PORT} (started in ${Math.round(process.uptime() * 1000)} ms)`);
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
