// Types of work.js for the TypeScript app (nestjs), which compiles against them and runs work.js itself.

/** A parsed JSON body; validateReading narrows it to a reading. */
export type Reading = Record<string, unknown> & { deviceId: string; timestamp: number };

export function xorshift32(seed?: number): () => number;
export function monteCarloPi(n: number): number;
export function matrixTrace(size?: number): number;
export function countPrimes(limit: number): number;
export function fib(n: number): number;
export function sleep(ms: number, wait?: (ms: number) => Promise<unknown>): Promise<void>;
export const METRIC_KEYS: string[];
export function validateReading(body: unknown): string | null;
export function enrich(reading: Record<string, unknown>): { mean: number; min: number; max: number; stddev: number };

export class Lru<V> {
  constructor(capacity: number);
  get(key: string): V | undefined;
  set(key: string, value: V): void;
}
