import os from 'node:os';
import v8 from 'node:v8';

import { Controller, Get } from '@nestjs/common';

import { sqliteDriver } from '../../contract/db.js';

// The same image runs on Node and on Bun, on three SQLite drivers (scenarios.yaml: nestjs-bun,
// nestjs-sqlite3, nestjs-bun-sqlite): /health names both, so a run's record says which one it measured.
const bunVersion = process.versions.bun;

const health = {
  status: 'UP',
  runtime: bunVersion ? 'bun' : 'node',
  version: bunVersion ?? process.versions.node,
  framework: 'nestjs',
  frameworkVersion: (require('@nestjs/core/package.json') as { version: string }).version,
  threadModel: 'event-loop',
  availableProcessors: os.availableParallelism(),
  workers: 1,
  database: process.env.DATABASE_URL ? 'pg' : sqliteDriver(),
  // V8's heap ceiling on Node. Bun's JavaScriptCore has no ceiling: its node:v8 shim answers a
  // figure that is none (~280 MB in a 1 GiB container, where 600 MB allocate fine), so Bun
  // reports null: see README.md, "Heap".
  maxHeapBytes: bunVersion ? null : v8.getHeapStatistics().heap_size_limit,
  gc: null,
};

@Controller()
export class HealthController {
  @Get('health')
  health() {
    return health;
  }
}
