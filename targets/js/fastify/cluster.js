// iotbench target node-cluster: a node:cluster primary that creates the shared SQLite file (WAL), or
// the PostgreSQL table (DATABASE_URL), with the 50 seeds, then forks server.js once per CPU of the
// cpuset; each worker runs the Fastify app with its own connection to that file, or its share of the
// pool (DB_POOL_SIZE divided among the workers). The primary serves no request, only GET /signals
// when SIGNALS_PORT is set. See README.md.
import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';

import { createReadingsFile, createReadingsPostgres } from '../contract/db.js';
import { startSignals } from '../contract/signals.js';

const DB_FILE = process.env.DB_FILE || join(os.tmpdir(), 'iotbench-readings.db');

// sched_getaffinity: the cpuset's CPUs, not the host's (a CPU quota would not show here).
const workers = os.availableParallelism();
const heapMiB = workerHeapMiB(workers);
const onPostgres = Boolean(process.env.DATABASE_URL);
if (onPostgres) await createReadingsPostgres();
else createReadingsFile(DB_FILE);
// GET /signals (SIGNALS_PORT): the primary answers for its workers, whom it asks over IPC.
await startSignals({ cluster: { workers } });
cluster.setupPrimary({
  exec: join(import.meta.dirname, 'server.js'),
  execArgv: [...process.execArgv, `--max-old-space-size=${heapMiB}`],
});
const env = { CLUSTER_WORKERS: String(workers), ...(!onPostgres && { DB_FILE }) };
for (let i = 0; i < workers; i++) cluster.fork(env);

let stopping = false;
// A worker that dies is replaced (what a production cluster does), and says so in the log.
cluster.on('exit', (worker, code, signal) => {
  if (stopping) {
    if (Object.keys(cluster.workers).length === 0) process.exit(0);
    return;
  }
  console.log(`worker ${worker.process.pid} exited (code ${code}, signal ${signal}); forking a new one`);
  cluster.fork(env);
});
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    stopping = true;
    for (const worker of Object.values(cluster.workers)) worker.process.kill('SIGTERM');
  });
}
console.log(`node-cluster primary ${process.pid}: ${workers} workers, --max-old-space-size=${heapMiB} each, database ${onPostgres ? 'PostgreSQL' : DB_FILE}`);

/**
 * Old-space ceiling of each worker, in MiB: 75 % of the container's memory shared by the workers
 * (the rest for what V8 keeps outside its old space). V8 sizes each process's heap from the whole container
 * memory, so without this N workers could together grow to N times what the cgroup allows.
 */
function workerHeapMiB(workers) {
  const limit = Math.min(cgroupMemoryLimit() ?? Infinity, os.totalmem());
  return Math.max(16, Math.floor((0.75 * limit) / workers / 2 ** 20));
}

/**
 * The container's memory limit in bytes from its cgroup, or null when none can be read: cgroup v2's
 * memory.max ("max" = none), else v1's memory.limit_in_bytes (this host's Docker 20.10 runs v1; an
 * unlimited v1 cgroup reads as a huge number, which the min with the host's memory above absorbs).
 */
function cgroupMemoryLimit() {
  for (const file of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    try {
      const text = readFileSync(file, 'utf8').trim();
      return text === 'max' ? null : Number(text);
    } catch {
      // not this cgroup version: try the next file
    }
  }
  return null;
}
