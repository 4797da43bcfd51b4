// The readings database of the Node apps (and of fastify-bun and nestjs-bun, the same code on Bun):
// SQLite in memory by default, node-cluster's workers sharing one WAL file; PostgreSQL through the pg
// package when DATABASE_URL is set (docs/contract.md, "Process"). The SQLite driver is node:sqlite
// unless SQLITE_DRIVER names another: bun:sqlite (on Bun) or sqlite3 (the npm package, which an app
// that ships it hands over). Statements are prepared once (pg: named statements, prepared once per
// connection). The embedded store keeps the latest READINGS_KEEP readings.
import { createRequire } from 'node:module';
import { rmSync } from 'node:fs';

import { registerPool } from './signals.js';
import { CREATE_TABLE, CREATE_TABLE_POSTGRES, evictedBy, keepReadings, pageRow, poolSize, seedRows, SQL, SQL_POSTGRES } from './readings.js';

const IN_MEMORY = ':memory:';

// pg, node:sqlite and bun:sqlite are loaded only by the stores that use them (Node has no bun:sqlite;
// the embedded store never pays for pg). pg resolves from contract/node_modules (contract/package.json;
// every Dockerfile installs it beside the runtimes).
const require = createRequire(import.meta.url);

/** SQLITE_DRIVER's values; the first is the default. */
export const SQLITE_DRIVERS = ['node:sqlite', 'bun:sqlite', 'sqlite3'];

export function sqliteDriver(env = process.env) {
  const name = env.SQLITE_DRIVER || SQLITE_DRIVERS[0];
  if (!SQLITE_DRIVERS.includes(name)) throw new Error(`SQLITE_DRIVER=${name}: give one of ${SQLITE_DRIVERS.join(', ')}`);
  return name;
}

/**
 * Opens the readings database: PostgreSQL when DATABASE_URL is set, else SQLite (file: one that
 * createReadingsFile made, shared with other processes; unset: a fresh table in memory with the 50
 * seeds). Its methods answer values (node:sqlite, bun:sqlite) or promises (sqlite3, PostgreSQL):
 * callers await them. `ready` settles once the table and seeds exist and, on PostgreSQL, the pool's
 * connections are open; the app listens only after it. options.create: false when another process
 * created the table (node-cluster's workers); options.share: how many processes share the pool's size
 * (node-cluster); options.require: the app's require, which finds the sqlite3 package in an app
 * that ships it.
 */
export function openReadings(file = IN_MEMORY, options = {}) {
  const url = process.env.DATABASE_URL;
  if (url) return openPostgres(url, options);
  const driver = sqliteDriver();
  if (driver === 'sqlite3') {
    if (!options.require) throw new Error('SQLITE_DRIVER=sqlite3: this app does not ship the sqlite3 package (nestjs, fastify and express do)');
    if (file !== IN_MEMORY) throw new Error('SQLITE_DRIVER=sqlite3 keeps the table in memory only: a shared file is node:sqlite\'s');
    return openSqlite3(loadSqlite3(options.require));
  }
  return openSqlite(file, driver);
}

/** The sqlite3 package from the app's dependencies: its addon is compiled only into images built
 * with SQLITE3=1 (the -sqlite3 targets' build_args), since compiling it takes minutes. */
function loadSqlite3(require) {
  try {
    return require('sqlite3');
  } catch (e) {
    throw new Error(`SQLITE_DRIVER=sqlite3: the sqlite3 package does not load (${String(e.message).split('\n')[0]}): build the image with SQLITE3=1, as the -sqlite3 targets do (build_args: {SQLITE3: "1"} in scenarios.yaml)`);
  }
}

/** A database of a synchronous driver: node:sqlite and bun:sqlite have the same prepare/run/all/get. */
function openDatabase(file, driver) {
  if (driver === 'bun:sqlite') {
    if (!process.versions.bun) throw new Error('SQLITE_DRIVER=bun:sqlite runs on Bun only: give node:sqlite or sqlite3 on Node');
    const { Database } = require('bun:sqlite');
    return new Database(file);
  }
  const { DatabaseSync } = require('node:sqlite');
  return new DatabaseSync(file);
}

/**
 * SQLite through a synchronous driver (node:sqlite, or bun:sqlite: bun-native's store): in memory with
 * the table and the seeds, or a file createReadingsFile made. Values, not promises.
 */
export function openSqlite(file = IN_MEMORY, driver = SQLITE_DRIVERS[0]) {
  const db = openDatabase(file, driver);
  const keep = keepReadings();
  if (file === IN_MEMORY) {
    createAndSeed(db, keep);
  } else {
    // A writer that finds the write lock taken waits up to 5 s instead of failing with SQLITE_BUSY.
    db.exec('PRAGMA busy_timeout = 5000');
    // WAL's usual setting: fsync at checkpoints, not per commit (durability is not what is measured).
    db.exec('PRAGMA synchronous = NORMAL');
    const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'readings'").get();
    if (!table) throw new Error(`database file ${file} has no readings table: create it first (createReadingsFile, as node-cluster's cluster.js does)`);
  }
  const insertReading = db.prepare(SQL.insert);
  const deleteReading = db.prepare(SQL.evict);
  const selectPage = db.prepare(SQL.page);
  const selectLatest10 = db.prepare(SQL.latest10);
  const countReadings = db.prepare(SQL.count);
  return {
    kind: 'sqlite',
    ready: Promise.resolve(),
    /** Binds deviceId and ts as they come: a missing one fails NOT NULL (a 500, never a 2xx). */
    insert: (deviceId, ts, payload) => {
      const id = Number(insertReading.run(deviceId, ts, payload).lastInsertRowid);
      const old = evictedBy(id, keep);
      if (old) deleteReading.run(old);
      return id;
    },
    /** The latest 50 readings (id desc) as /page rows. */
    page: () => selectPage.all().map(pageRow),
    /** The latest 10 readings (id desc): id, device_id, ts. */
    latest10: () => selectLatest10.all(),
    count: () => countReadings.get().n,
    close: async () => db.close(),
  };
}

/**
 * The sqlite3 package's asynchronous API (each statement runs on libuv's thread pool and answers in a
 * callback), in memory, statements prepared once: the driver seed 000's Node stacks used.
 */
function openSqlite3(sqlite3) {
  const db = new sqlite3.Database(IN_MEMORY);
  const keep = keepReadings();
  // run answers the statement (its lastID); all and get answer the rows. A get leaves its statement
  // open for more rows until it is reset (queued behind the get: a statement's calls run in order).
  const call = (statement, method, params = []) =>
    new Promise((resolve, reject) => {
      statement[method](...params, function (error, rows) {
        if (error) reject(error);
        else resolve(method === 'run' ? this : rows);
      });
      if (method === 'get') statement.reset();
    });
  const prepare = (sql) =>
    new Promise((resolve, reject) => {
      const statement = db.prepare(sql, (error) => (error ? reject(error) : resolve(statement)));
    });
  let insertReading, deleteReading, selectPage, selectLatest10, countReadings;
  const insert = async (deviceId, ts, payload) => {
    const { lastID } = await call(insertReading, 'run', [deviceId, ts, payload]);
    const old = evictedBy(lastID, keep);
    if (old) await call(deleteReading, 'run', [old]);
    return lastID;
  };
  const ready = (async () => {
    await new Promise((resolve, reject) => db.exec(CREATE_TABLE, (error) => (error ? reject(error) : resolve())));
    [insertReading, deleteReading, selectPage, selectLatest10, countReadings] = await Promise.all(
      [SQL.insert, SQL.evict, SQL.page, SQL.latest10, SQL.count].map(prepare),
    );
    for (const row of seedRows()) await insert(...row);
  })();
  return {
    kind: 'sqlite',
    ready,
    insert,
    page: async () => (await call(selectPage, 'all')).map(pageRow),
    latest10: () => call(selectLatest10, 'all'),
    count: async () => (await call(countReadings, 'get')).n,
    close: () => new Promise((resolve) => db.close(() => resolve())),
  };
}

/**
 * A fresh database file (any old one and its WAL deleted) in WAL mode: one writer at a time, readers
 * never blocked. With the table and the 50 seeds; closed again, for other processes to open.
 */
export function createReadingsFile(file) {
  for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
  const db = openDatabase(file, SQLITE_DRIVERS[0]);
  db.exec('PRAGMA journal_mode = WAL');
  createAndSeed(db, keepReadings());
  db.close();
}

/** The table and the 50 seeds, each insert keeping the bound as any other does. */
function createAndSeed(db, keep) {
  db.exec(CREATE_TABLE);
  const insert = db.prepare(SQL.insert);
  const evict = db.prepare(SQL.evict);
  for (const row of seedRows()) {
    const old = evictedBy(Number(insert.run(...row).lastInsertRowid), keep);
    if (old) evict.run(old);
  }
}

/** BIGINT (oid 20: id, ts, COUNT(*)) as a JavaScript number, as node:sqlite answers it; ids stay far below 2^53. */
function numberTypes(pg) {
  return { getTypeParser: (oid, format) => (oid === 20 ? Number : pg.types.getTypeParser(oid, format)) };
}

function openPostgres(url, { create = true, share = 1 } = {}) {
  const pg = require('pg');
  const max = Math.max(1, Math.floor(poolSize() / share));
  const pool = new pg.Pool({
    connectionString: url,
    max,
    // As HikariCP on the JVM targets: a fixed pool (connections never retired when idle), a caller
    // waits at most 30 s for a connection.
    idleTimeoutMillis: 0,
    connectionTimeoutMillis: 30_000,
    types: numberTypes(pg),
  });
  // An idle connection that the server drops must not crash the process; the next query reconnects.
  pool.on('error', (error) => console.error(`postgres: idle connection failed: ${error.message}`));
  // GET /signals' pool `pg`: busy = connections checked out (or opening), waiting = callers queued for one.
  registerPool('pg', 'connections', () => ({ size: max, busy: pool.totalCount - pool.idleCount, waiting: pool.waitingCount }));
  // pool.query borrows a connection for this one statement and returns it at once: none is held
  // across a wait. A name makes it a prepared statement on each connection.
  const run = (name, text, values) => pool.query({ name, text, values });
  const ready = (async () => {
    if (create) await createAndSeedPostgres(pool);
    // Open every connection now, as HikariCP does at startup, not under the first load.
    const clients = await Promise.all(Array.from({ length: max }, () => pool.connect()));
    for (const client of clients) client.release();
  })();
  return {
    kind: 'postgresql',
    ready,
    insert: async (deviceId, ts, payload) => (await run('insert-reading', SQL_POSTGRES.insert, [deviceId, ts, payload])).rows[0].id,
    page: async () => (await run('page', SQL_POSTGRES.page, [])).rows.map(pageRow),
    latest10: async () => (await run('latest10', SQL_POSTGRES.latest10, [])).rows,
    count: async () => (await run('count', SQL_POSTGRES.count, [])).rows[0].n,
    close: () => pool.end(),
  };
}

async function createAndSeedPostgres(pool) {
  const client = await pool.connect();
  try {
    await client.query(CREATE_TABLE_POSTGRES);
    for (const row of seedRows()) await client.query({ name: 'insert-reading', text: SQL_POSTGRES.insert, values: row });
  } finally {
    client.release();
  }
}

/**
 * The table and its 50 seeds on PostgreSQL (DATABASE_URL), once, for processes that then open it with
 * { create: false }: node-cluster's primary before it forks.
 */
export async function createReadingsPostgres() {
  const pg = require('pg');
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1, types: numberTypes(pg) });
  try {
    await createAndSeedPostgres(pool);
  } finally {
    await pool.end();
  }
}
