import { Injectable } from '@nestjs/common';

import { openReadings, type LatestRow, type PageRow, type Readings } from '../../contract/db.js';

export type { LatestRow, PageRow };

/**
 * The embedded database as a Nest provider: contract/db.js, node:sqlite in memory (Node and Bun both
 * implement it, so both runtimes run the same driver), the contract's table, the 50 seeds, statements
 * prepared once.
 */
@Injectable()
export class ReadingsService {
  readonly readings: Readings = openReadings();

  /** Binds deviceId and timestamp as they come: a missing one fails NOT NULL (a 500, never a 2xx). */
  insert(deviceId: unknown, ts: unknown, payload: string): number {
    return this.readings.insert(deviceId, ts, payload);
  }

  page(): PageRow[] {
    return this.readings.page();
  }

  count(): number {
    return this.readings.count();
  }
}
