// The CPU work of /process-data, /cpu and /ingest/realistic, as tasks. With WORKER_POOL=on
// (node-workers) piscina calls the named export on a worker thread; otherwise (fastify, fastify-bun,
// node-cluster, node-blocking) server.js calls the same functions on the event loop. Arguments and
// answers are plain data (structured clone).
import { countPrimes, enrich as enrichReading, fib as fibonacci, matrixTrace, monteCarloPi } from '../contract/work.js';

/** /process-data: naive fib(n). */
export function fib(n) {
  return fibonacci(n);
}

/** /cpu: the three computations, in the contract's order. */
export function cpu() {
  return { pi: monteCarloPi(1_000_000), trace: matrixTrace(), primes: countPrimes(100_000) };
}

/** /ingest/realistic's enrichment: statistics of metric01..66, then monteCarloPi(10000). */
export function enrich(reading) {
  const { mean, min, max, stddev } = enrichReading(reading);
  return { mean, min, max, stddev, pi: monteCarloPi(10_000) };
}
