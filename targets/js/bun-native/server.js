// iotbench target: Bun's own HTTP server (Bun.serve with routes) and bun:sqlite, or Bun's own
// PostgreSQL client (Bun.SQL) when DATABASE_URL is set. No framework, no dependencies. One process,
// one event loop. The contract is docs/contract.md.
import { SQL as PostgresClient } from 'bun';
import { constants as cryptoConstants } from 'node:crypto';
import { unlink } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';

import {
  CREATE_TABLE_POSTGRES,
  enterprisePayload,
  enterpriseReading,
  pageRow,
  poolSize,
  seedRows,
} from '../contract/readings.js';
import { openSqlite } from '../contract/db.js';
import { fanOut } from '../contract/fanout.js';
import { isTls, servedProtocol, TLS_DIR } from '../contract/protocol.js';
import { poolUnavailable, startSignals } from '../contract/signals.js';
import { countPrimes, enrich, fib, Lru, matrixTrace, monteCarloPi, sleep, validateReading } from '../contract/work.js';

const PORT = Number(process.env.PORT ?? 8080);
// The address it listens on: loopback, unless a run on a remote Docker engine names that host's (docs/scale.md).
const BIND_ADDRESS = process.env.BIND_ADDRESS || '127.0.0.1';
const DOWNSTREAM_URL = process.env.DOWNSTREAM_URL || `http://127.0.0.1:${PORT}/downstream`;

// ---- database: the contract's table and 50 seeds, statements prepared once; values (bun:sqlite) or
// promises (PostgreSQL), every call awaited ----
const store = process.env.DATABASE_URL ? await openPostgres(process.env.DATABASE_URL) : openSqlite(':memory:', 'bun:sqlite');

/**
 * Bun.SQL, Bun's own PostgreSQL client, as bun:sqlite is its own SQLite driver: what this target
 * measures is Bun's stack. A fixed pool of DB_POOL_SIZE connections (10), opened before the server
 * listens and never retired when idle; each query borrows one for itself (none is held across a wait)
 * and runs as a prepared statement (Bun.SQL's default, `prepare: true`). int8 columns come back as
 * strings: converted to numbers, as bun:sqlite answers them.
 */
async function openPostgres(url) {
  const max = poolSize();
  poolUnavailable('bun-sql', `Bun.SQL (Bun ${Bun.version}) tells no count of its connections in use or of the queries waiting for one`);
  const sql = new PostgresClient({ url, max, idleTimeout: 0, connectionTimeout: 30, prepare: true });
  await sql.unsafe(CREATE_TABLE_POSTGRES);
  // Tagged templates: Bun.SQL prepares them (sql.unsafe is sent unprepared); the text is SQL_POSTGRES's.
  const insert = async (deviceId, ts, payload) =>
    Number((await sql`INSERT INTO readings (device_id, ts, payload) VALUES (${deviceId}, ${ts}, ${payload}) RETURNING id`)[0].id);
  for (const row of seedRows()) await insert(...row);
  await Promise.all(Array.from({ length: max }, () => sql`SELECT 1`));
  const numbers = (r) => ({ ...r, id: Number(r.id), ts: Number(r.ts) });
  return {
    insert,
    page: async () => (await sql`SELECT id, device_id, ts, payload FROM readings ORDER BY id DESC LIMIT 50`).map((r) => pageRow(numbers(r))),
    latest10: async () => (await sql`SELECT id, device_id, ts FROM readings ORDER BY id DESC LIMIT 10`).map(numbers),
    count: async () => Number((await sql`SELECT COALESCE(MAX(id), 0) AS n FROM readings`)[0].n),
    close: () => sql.close(),
  };
}

const cache = new Lru(1000);
const health = {
  status: 'UP',
  runtime: 'bun',
  version: Bun.version,
  framework: 'bun-native',
  threadModel: 'event-loop',
  availableProcessors: os.availableParallelism(),
  workers: 1,
  // JavaScriptCore has no heap ceiling to set or report; its GC sizes itself from the cgroup limit.
  maxHeapBytes: null,
  gc: null,
};

// ---- helpers ----
class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** The body as received (stored in `payload`) and its parse. */
async function readJson(request) {
  const text = await request.text();
  try {
    return { text, body: JSON.parse(text) };
  } catch (error) {
    throw new HttpError(400, `body is not valid JSON: ${error.message}`);
  }
}

function validReading(body) {
  const problem = validateReading(body);
  if (problem) throw new HttpError(400, problem);
  return body;
}

const escapes = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (value) => String(value).replace(/[&<>"']/g, (c) => escapes[c]);

/** /page: a plain template literal, HTML-escaped: Bun ships no template engine, this is its idiom. */
function renderPage(readings) {
  const rows = readings
    .map(
      (r) =>
        `<tr class="reading"><td>${escapeHtml(r.id)}</td><td>${escapeHtml(r.deviceId)}</td><td>${escapeHtml(r.timestamp)}</td>` +
        `<td>${escapeHtml(r.metric01)}</td><td>${escapeHtml(r.metric02)}</td><td>${escapeHtml(r.metric03)}</td></tr>\n`,
    )
    .join('');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>iotbench: latest readings</title>
</head>
<body>
<h1>Latest ${readings.length} readings</h1>
<table>
<thead><tr><th>id</th><th>deviceId</th><th>timestamp</th><th>metric01</th><th>metric02</th><th>metric03</th></tr></thead>
<tbody>
${rows}</tbody>
</table>
</body>
</html>
`;
}

// ---- the routes ----
const routes = {
  '/health': { GET: () => Response.json(health) },

  '/ingest': {
    POST: async (request) => {
      const start = performance.now();
      const { text, body } = await readJson(request);
      validReading(body);
      const id = await store.insert(body.deviceId, body.timestamp, text);
      await sleep(50, Bun.sleep);
      return Response.json({ id, processingMs: performance.now() - start });
    },
  },

  '/ingest/fast': {
    POST: async (request) => {
      const { text, body } = await readJson(request);
      if (body === null || typeof body !== 'object' || Array.isArray(body)) {
        throw new HttpError(400, 'body must be a JSON object');
      }
      return Response.json({ id: await store.insert(body.deviceId, body.timestamp, text) });
    },
  },

  '/ingest/realistic': {
    POST: async (request) => {
      const start = performance.now();
      const { text, body } = await readJson(request);
      validReading(body);
      const id = await store.insert(body.deviceId, body.timestamp, text);
      const { mean, min, max, stddev } = enrich(body);
      const pi = monteCarloPi(10_000);
      return Response.json({ id, processingMs: performance.now() - start, mean, min, max, stddev, pi });
    },
  },

  '/cpu': {
    GET: () => Response.json({ pi: monteCarloPi(1_000_000), trace: matrixTrace(), primes: countPrimes(100_000) }),
  },

  '/blocking': {
    GET: async (request) => {
      const raw = new URL(request.url).searchParams.get('ms');
      let ms = 500;
      if (raw !== null) {
        ms = /^\d{1,5}$/.test(raw) ? Number(raw) : NaN;
        if (!(ms >= 0 && ms <= 10_000)) throw new HttpError(400, 'ms must be an integer from 0 to 10000');
      }
      await sleep(ms, Bun.sleep);
      return Response.json({ waitedMs: ms });
    },
  },

  '/page': {
    GET: async () => {
      const readings = await store.page();
      return new Response(renderPage(readings), { headers: { 'Content-Type': 'text/html; charset=utf-8' } });
    },
  },

  '/process-data': {
    POST: async (request) => {
      const { body } = await readJson(request);
      const n = body?.n;
      if (!Number.isInteger(n) || n < 1 || n > 40) throw new HttpError(400, 'n must be an integer from 1 to 40');
      return Response.json({ n, result: fib(n) });
    },
  },

  '/enterprise': {
    GET: async () => {
      // 1. insert
      const id = await store.insert(enterpriseReading.deviceId, enterpriseReading.timestamp, enterprisePayload);
      // 2. select the latest 10
      const rows = await store.latest10();
      // 3. file: write 4,096 bytes, read back, delete
      const json = JSON.stringify(rows);
      const content = json + ' '.repeat(Math.max(0, 4096 - Buffer.byteLength(json)));
      const file = join(os.tmpdir(), `iotbench-enterprise-${process.pid}-${id}.json`);
      await Bun.write(file, content);
      const bytes = (await Bun.file(file).bytes()).length;
      await unlink(file);
      // 4. downstream call
      const response = await fetch(DOWNSTREAM_URL);
      const downstreamBody = await response.json();
      if (!response.ok) throw new Error(`downstream answered ${response.status}`);
      // 5. LRU cache
      const key = `device:${id % 100}`;
      const cacheHit = cache.get(key) !== undefined;
      if (!cacheHit) cache.set(key, rows);
      return Response.json({ id, rows: rows.length, bytes, downstream: downstreamBody?.ok === true, cacheHit });
    },
  },

  '/downstream': {
    GET: async () => {
      await sleep(20, Bun.sleep);
      return Response.json({ ok: true });
    },
  },

  '/fanout': { GET: async () => Response.json(await fanOut((ms) => sleep(ms, Bun.sleep))) },

  '/stats': { GET: async () => Response.json({ rows: await store.count() }) },
};

// Bun.serve speaks HTTP/1.1 alone, over TLS (BoringSSL) when given a certificate: no h2 (README.md).
// Its tls options have no minVersion: TLS 1.3 only is OpenSSL's option flags, which Bun takes.
const PROTOCOL = servedProtocol(['http1', 'https']);
const { SSL_OP_NO_TLSv1, SSL_OP_NO_TLSv1_1, SSL_OP_NO_TLSv1_2 } = cryptoConstants;
const tls = isTls(PROTOCOL) && {
  cert: Bun.file(`${TLS_DIR}/cert.pem`),
  key: Bun.file(`${TLS_DIR}/key.pem`),
  secureOptions: SSL_OP_NO_TLSv1 | SSL_OP_NO_TLSv1_1 | SSL_OP_NO_TLSv1_2,
};
// GET /signals on SIGNALS_PORT, when set: a node:http server of its own, not Bun.serve's routes.
await startSignals();
const server = Bun.serve({
  ...(tls && { tls }),
  hostname: BIND_ADDRESS,
  port: PORT,
  development: false,
  // Idle keep-alive connections stay open 65 s, as on the Node targets (Bun's default is 10 s).
  idleTimeout: 65,
  // 1 MiB, stated: the payload sweep goes up to 256 KB (Bun's default is 128 MiB).
  maxRequestBodySize: 1 << 20,
  routes,
  // Paths no route names, and methods a route does not list.
  fetch: (request) =>
    Response.json({ error: `no route ${request.method} ${new URL(request.url).pathname}` }, { status: 404 }),
  error: (error) => {
    const status = error instanceof HttpError ? error.status : 500;
    return Response.json({ error: error.message }, { status });
  },
});

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    Promise.all([server.stop(true), store.close()]).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

console.log(`bun-native on bun ${Bun.version} serving ${PROTOCOL} on ${server.hostname}:${server.port} (started in ${Math.round(performance.now())} ms)`);
