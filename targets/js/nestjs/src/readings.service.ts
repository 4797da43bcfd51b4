import { Injectable } from '@nestjs/common';

import { openReadings, type LatestRow, type PageRow, type Readings } from '../../contract/db.js';

export type { LatestRow, PageRow };

/**
 * The database as a Nest provider: contract/db.js, SQLite in memory — node:sqlite by default (Node and
 * Bun both implement it, so both runtimes run the same driver), bun:sqlite or the sqlite3 package when
 * SQLITE_DRIVER says so (targets nestjs-bun-sqlite, nestjs-sqlite3) — or PostgreSQL through pg when
 * DATABASE_URL is set; the contract's table, the 50 seeds, statements prepared once. main.ts awaits
 * `readings.ready` before it listens.
 */
@Injectable()
export class ReadingsService {
  // sqlite3 is this app's own dependency (a native addon built into SQLITE3=1 images), loaded only when chosen.
  readonly readings: Readings = openReadings(undefined, { require });

  /** Binds deviceId and timestamp as they come: a missing one fails NOT NULL (a 500, never a 2xx). */
  async insert(deviceId: unknown, ts: unknown, payload: string): Promise<number> {
    return this.readings.insert(deviceId, ts, payload);
  }

  async page(): Promise<PageRow[]> {
    return this.readings.page();
  }

  async count(): Promise<number> {
    return this.readings.count();
  }
}
