import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';

import { Injectable } from '@nestjs/common';

/** One row of /page: the columns plus three metrics from the stored payload. */
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

/**
 * The embedded database: node:sqlite in memory (Node and Bun both implement it, so both runtimes
 * run the same driver), the contract's table, the 50 seeds, statements prepared once.
 */
@Injectable()
export class ReadingsService {
  /** The standard reading (payloads/iot-reading.json). */
  readonly standard: Record<string, unknown>;

  private readonly db = new DatabaseSync(':memory:');
  private readonly insertReading: StatementSync;
  private readonly selectPage: StatementSync;
  private readonly selectLatest10: StatementSync;
  private readonly countReadings: StatementSync;

  constructor() {
    this.db.exec(`CREATE TABLE readings (
      id        INTEGER PRIMARY KEY AUTOINCREMENT,
      device_id VARCHAR(64) NOT NULL,
      ts        BIGINT      NOT NULL,
      payload   TEXT        NOT NULL
    )`);
    this.insertReading = this.db.prepare('INSERT INTO readings (device_id, ts, payload) VALUES (?, ?, ?)');
    this.selectPage = this.db.prepare('SELECT id, device_id, ts, payload FROM readings ORDER BY id DESC LIMIT 50');
    this.selectLatest10 = this.db.prepare('SELECT id, device_id, ts FROM readings ORDER BY id DESC LIMIT 10');
    this.countReadings = this.db.prepare('SELECT COUNT(*) AS n FROM readings');

    this.standard = JSON.parse(readFileSync(join(__dirname, '..', 'iot-reading.json'), 'utf8'));
    for (let i = 0; i < 50; i++) {
      const seed = { ...this.standard, deviceId: `seed-${String(i).padStart(2, '0')}`, timestamp: 1763812800000 + i };
      this.insert(seed.deviceId, seed.timestamp, JSON.stringify(seed));
    }
  }

  /** Binds deviceId and timestamp as they come: a missing one fails NOT NULL (a 500, never a 2xx). */
  insert(deviceId: unknown, ts: unknown, payload: string): number {
    return Number(this.insertReading.run(deviceId as string, ts as number, payload).lastInsertRowid);
  }

  page(): PageRow[] {
    return this.selectPage.all().map((row) => {
      const reading = JSON.parse(row.payload as string);
      return {
        id: row.id as number,
        deviceId: row.device_id as string,
        timestamp: row.ts as number,
        metric01: reading.metric01,
        metric02: reading.metric02,
        metric03: reading.metric03,
      };
    });
  }

  latest10(): LatestRow[] {
    return this.selectLatest10.all() as unknown as LatestRow[];
  }

  count(): number {
    return (this.countReadings.get() as { n: number }).n;
  }
}
