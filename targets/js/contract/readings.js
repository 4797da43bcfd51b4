// The contract's readings table and its data, whatever the driver (node:sqlite in db.js, bun:sqlite in
// bun-native): the schema, the statements, the standard reading, the 50 seeds, the /enterprise reading
// and a /page row. See docs/contract.md, "Process" and "Endpoints".
import { readFileSync } from 'node:fs';

export const CREATE_TABLE = `CREATE TABLE readings (
  id        INTEGER PRIMARY KEY AUTOINCREMENT,
  device_id VARCHAR(64) NOT NULL,
  ts        BIGINT      NOT NULL,
  payload   TEXT        NOT NULL
)`;

export const SQL = {
  insert: 'INSERT INTO readings (device_id, ts, payload) VALUES (?, ?, ?)',
  page: 'SELECT id, device_id, ts, payload FROM readings ORDER BY id DESC LIMIT 50',
  latest10: 'SELECT id, device_id, ts FROM readings ORDER BY id DESC LIMIT 10',
  count: 'SELECT COUNT(*) AS n FROM readings',
};

/** payloads/iot-reading.json; iot-reading.json here is a copy (the build context cannot reach payloads/). */
export const standardReading = JSON.parse(readFileSync(new URL('./iot-reading.json', import.meta.url), 'utf8'));

/** The 50 seeds as insert arguments: deviceId seed-00..seed-49, timestamp 1763812800000 + i. */
export function seedRows() {
  return Array.from({ length: 50 }, (_, i) => {
    const seed = { ...standardReading, deviceId: `seed-${String(i).padStart(2, '0')}`, timestamp: 1763812800000 + i };
    return [seed.deviceId, seed.timestamp, JSON.stringify(seed)];
  });
}

/** The standard reading with deviceId "enterprise" (its timestamp unchanged), built once. */
export const enterpriseReading = { ...standardReading, deviceId: 'enterprise' };
export const enterprisePayload = JSON.stringify(enterpriseReading);

/** One /page row: the columns, plus metric01..03 from the stored payload. */
export function pageRow(row) {
  const reading = JSON.parse(row.payload);
  return {
    id: row.id,
    deviceId: row.device_id,
    timestamp: row.ts,
    metric01: reading.metric01,
    metric02: reading.metric02,
    metric03: reading.metric03,
  };
}
