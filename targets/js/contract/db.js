// The readings database on node:sqlite (Node 24, and Bun 1.4, which implements it), statements
// prepared once. In memory by default; node-cluster's workers share one WAL file instead.
import { rmSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';

import { CREATE_TABLE, pageRow, seedRows, SQL } from './readings.js';

const IN_MEMORY = ':memory:';

/**
 * Opens the readings database. In memory: a fresh table with the 50 seeds. A file: one that
 * createReadingsFile made, shared with other processes (each opens its own connection).
 */
export function openReadings(file = IN_MEMORY) {
  const db = new DatabaseSync(file);
  if (file === IN_MEMORY) {
    createAndSeed(db);
  } else {
    // A writer that finds the write lock taken waits up to 5 s instead of failing with SQLITE_BUSY.
    db.exec('PRAGMA busy_timeout = 5000');
    // WAL's usual setting: fsync at checkpoints, not per commit (durability is not what is measured).
    db.exec('PRAGMA synchronous = NORMAL');
    const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'readings'").get();
    if (!table) throw new Error(`database file ${file} has no readings table: create it first (createReadingsFile, as node-cluster's cluster.js does)`);
  }
  const insertReading = db.prepare(SQL.insert);
  const selectPage = db.prepare(SQL.page);
  const selectLatest10 = db.prepare(SQL.latest10);
  const countReadings = db.prepare(SQL.count);
  return {
    /** Binds deviceId and ts as they come: a missing one fails NOT NULL (a 500, never a 2xx). */
    insert: (deviceId, ts, payload) => Number(insertReading.run(deviceId, ts, payload).lastInsertRowid),
    /** The latest 50 readings (id desc) as /page rows. */
    page: () => selectPage.all().map(pageRow),
    /** The latest 10 readings (id desc): id, device_id, ts. */
    latest10: () => selectLatest10.all(),
    count: () => countReadings.get().n,
  };
}

/**
 * A fresh database file (any old one and its WAL deleted) in WAL mode: one writer at a time, readers
 * never blocked. With the table and the 50 seeds; closed again, for other processes to open.
 */
export function createReadingsFile(file) {
  for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
  const db = new DatabaseSync(file);
  db.exec('PRAGMA journal_mode = WAL');
  createAndSeed(db);
  db.close();
}

function createAndSeed(db) {
  db.exec(CREATE_TABLE);
  const insert = db.prepare(SQL.insert);
  for (const row of seedRows()) insert.run(...row);
}
