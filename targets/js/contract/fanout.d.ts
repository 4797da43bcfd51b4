// Types of fanout.js for the TypeScript app (nestjs).
export const FANOUT_TASKS: number;
export const FANOUT_TASK_MS: number;
export function fanoutPool(env?: Record<string, string | undefined>): number;
export function fanOut(): Promise<{ tasks: number; waitedMs: number }>;
