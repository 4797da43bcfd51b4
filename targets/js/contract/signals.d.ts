// Types of signals.js for the TypeScript app (nestjs).
export const SCHEMA: number;
export const RUNTIME: 'node' | 'bun';
export const DELAY_RESOLUTION_MS: number;
export function signalsPort(env?: Record<string, string | undefined>): number | null;
export function registerPool(
  name: string,
  kind: 'threads' | 'connections' | 'workers',
  read: () => { size: number; busy: number; waiting?: number | null },
): void;
export function poolUnavailable(name: string, why: string): void;
export function startSignals(options?: {
  env?: Record<string, string | undefined>;
  cluster?: { workers: number };
}): Promise<import('node:http').Server | null>;
