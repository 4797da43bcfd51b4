// GET /enterprise's five steps (docs/contract.md), on Node's fs and fetch; the apps answer its result.
import { readFile, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';

import { enterprisePayload, enterpriseReading } from './readings.js';

/**
 * readings: openReadings()'s object; cache: an Lru(1000) the app keeps; downstreamUrl: $DOWNSTREAM_URL
 * or the app's own /downstream.
 */
export async function enterprise(readings, cache, downstreamUrl) {
  // 1. insert
  const id = await readings.insert(enterpriseReading.deviceId, enterpriseReading.timestamp, enterprisePayload);
  // 2. select the latest 10
  const rows = await readings.latest10();
  // 3. file: write 4,096 bytes, read back, delete
  const json = JSON.stringify(rows);
  const content = json + ' '.repeat(Math.max(0, 4096 - Buffer.byteLength(json)));
  const file = join(os.tmpdir(), `iotbench-enterprise-${process.pid}-${id}.json`);
  await writeFile(file, content);
  const bytes = (await readFile(file)).length;
  await unlink(file);
  // 4. downstream call
  const response = await fetch(downstreamUrl);
  const downstreamBody = await response.json();
  if (!response.ok) throw new Error(`downstream answered ${response.status}`);
  // 5. LRU cache
  const key = `device:${id % 100}`;
  const cacheHit = cache.get(key) !== undefined;
  if (!cacheHit) cache.set(key, rows);
  return { id, rows: rows.length, bytes, downstream: downstreamBody?.ok === true, cacheHit };
}
