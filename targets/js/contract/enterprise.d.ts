// Types of enterprise.js for the TypeScript app (nestjs).
import type { LatestRow, Readings } from './db.js';
import type { Lru } from './work.js';

export function enterprise(
  readings: Readings,
  cache: Lru<LatestRow[]>,
  downstreamUrl: string,
): Promise<{ id: number; rows: number; bytes: number; downstream: boolean; cacheHit: boolean }>;
