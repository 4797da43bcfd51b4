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

export interface Readings {
  insert(deviceId: unknown, ts: unknown, payload: string): number;
  page(): PageRow[];
  latest10(): LatestRow[];
  count(): number;
}

export function openReadings(file?: string): Readings;
export function createReadingsFile(file: string): void;
