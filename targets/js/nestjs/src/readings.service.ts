import { Injectable } from '@nestjs/common';

import { openReadings, type LatestRow, type PageRow, type Readings } from '../../contract/db.js';

export type { LatestRow, PageRow };

/**
 * The database as a Nest provider: contract/db.js, node:sqlite in memory (Node and Bun both implement
 * it, so both runtimes run the same driver), or PostgreSQL through pg when DATABASE_URL is set; the
 * contract's table, the 50 seeds, statements prepared once. main.ts awaits `readings.ready` before it
 * listens.
 */
@Injectable()
export class ReadingsService {
  readonly readings: Readings = openReadings();

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
