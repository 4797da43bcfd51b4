// Types of db.js for the TypeScript app (nestjs).

/** One /page row: the columns plus three metrics from the stored payload. */
export interface PageRow {
  id: number;
  deviceId: string;
  timestamp: number;
  metric01: unknown;
  metric02: unknown;
  metric03: unknown;
}

export interface LatestRow {
  id: number;
  device_id: string;
  ts: number;
}

/** Values on node:sqlite and bun:sqlite, promises on sqlite3 and PostgreSQL: await every call. */
export interface Readings {
  kind: 'sqlite' | 'postgresql';
  ready: Promise<void>;
  insert(deviceId: unknown, ts: unknown, payload: string): number | Promise<number>;
  page(): PageRow[] | Promise<PageRow[]>;
  latest10(): LatestRow[] | Promise<LatestRow[]>;
  count(): number | Promise<number>;
  close(): Promise<void>;
}

export const SQLITE_DRIVERS: string[];
export function sqliteDriver(env?: Record<string, string | undefined>): string;
export function openReadings(file?: string, options?: { create?: boolean; share?: number; require?: (id: string) => unknown }): Readings;
export function openSqlite(file?: string, driver?: string): Readings;
export function createReadingsFile(file: string): void;
export function createReadingsPostgres(): Promise<void>;
