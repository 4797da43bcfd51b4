// The contract's deterministic work (docs/contract.md, "The deterministic work"), and the
// validation of the reading document. Plain functions, no framework code.

import { setTimeout as timer } from 'node:timers/promises';

const SEED = 2463534242;
const TWO_POW_32 = 4294967296;

/** xorshift32 with 32-bit unsigned arithmetic; returns u() in [0, 1). */
export function xorshift32(seed = SEED) {
  let x = seed >>> 0;
  return function u() {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / TWO_POW_32;
  };
}

/** n samples, each a = u() then b = u(); 4 * inside / n. Seeded afresh on every call. */
export function monteCarloPi(n) {
  const u = xorshift32();
  let inside = 0;
  for (let i = 0; i < n; i++) {
    const a = u();
    const b = u();
    if (a * a + b * b <= 1) inside++;
  }
  return (4 * inside) / n;
}

/** 100x100 doubles, A[i][j] = (i*j) % 7, B[i][j] = (i+j) % 5, full naive C = A x B, trace of C. */
export function matrixTrace(size = 100) {
  const a = new Array(size);
  const b = new Array(size);
  const c = new Array(size);
  for (let i = 0; i < size; i++) {
    a[i] = new Float64Array(size);
    b[i] = new Float64Array(size);
    c[i] = new Float64Array(size);
    for (let j = 0; j < size; j++) {
      a[i][j] = (i * j) % 7;
      b[i][j] = (i + j) % 5;
    }
  }
  for (let i = 0; i < size; i++) {
    const ai = a[i];
    const ci = c[i];
    for (let j = 0; j < size; j++) {
      let sum = 0;
      for (let k = 0; k < size; k++) sum += ai[k] * b[k][j];
      ci[j] = sum;
    }
  }
  let trace = 0;
  for (let i = 0; i < size; i++) trace += c[i][i];
  return trace;
}

/** Primes below limit by trial division: 2, then odd divisors d while d*d <= v. */
export function countPrimes(limit) {
  let count = 0;
  for (let v = 2; v < limit; v++) {
    if (isPrime(v)) count++;
  }
  return count;
}

function isPrime(v) {
  if (v < 2) return false;
  if (v % 2 === 0) return v === 2;
  for (let d = 3; d * d <= v; d += 2) {
    if (v % d === 0) return false;
  }
  return true;
}

/** Naive recursion, on purpose. */
export function fib(n) {
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

export const METRIC_KEYS = Array.from({ length: 66 }, (_, i) => `metric${String(i + 1).padStart(2, '0')}`);

/**
 * Validates a parsed reading in the contract's order. Returns null when valid, otherwise the
 * message for the 400 answer.
 */
export function validateReading(body) {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return 'body must be a JSON object';
  }
  const keyCount = Object.keys(body).length;
  if (keyCount !== 70) return `expected exactly 70 fields, got ${keyCount}`;
  const { deviceId, timestamp } = body;
  if (typeof deviceId !== 'string' || deviceId.length < 1 || deviceId.length > 64) {
    return 'deviceId must be a string of 1 to 64 characters';
  }
  if (!Number.isInteger(timestamp) || timestamp <= 0) return 'timestamp must be an integer > 0';
  if (typeof body.type !== 'string') return 'type must be a string';
  if (typeof body.firmware !== 'string') return 'firmware must be a string';
  for (const key of METRIC_KEYS) {
    if (typeof body[key] !== 'number') return `${key} must be a number`;
  }
  return null;
}

/** mean, min, max and population standard deviation of metric01..metric66. */
export function enrich(reading) {
  const n = METRIC_KEYS.length;
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const key of METRIC_KEYS) {
    const v = reading[key];
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const mean = sum / n;
  let squares = 0;
  for (const key of METRIC_KEYS) {
    const d = reading[key] - mean;
    squares += d * d;
  }
  return { mean, min, max, stddev: Math.sqrt(squares / n) };
}

/** A small LRU on a Map (insertion order = recency order). */
export class Lru {
  constructor(capacity) {
    this.capacity = capacity;
    this.map = new Map();
  }

  get(key) {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  set(key, value) {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value);
  }
}

/**
 * Waits at least ms of wall-clock time, as the JVM's Thread.sleep does: the contract's blocking
 * I/O. A Node or Bun timer counts from the event loop's clock, read when the loop woke (and in whole
 * milliseconds), so under load it was read before this handler ran and a timer alone can end a
 * millisecond or more early: what is left is waited again.
 */
export async function sleep(ms, wait = timer) {
  const until = performance.now() + ms;
  await wait(ms);
  for (let left = until - performance.now(); left > 0; left = until - performance.now()) {
    await wait(Math.ceil(left));
  }
}
