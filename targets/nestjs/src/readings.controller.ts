import { readFile, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as wait } from 'node:timers/promises';

import { Body, Controller, Get, HttpCode, Post, type RawBodyRequest, Render, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

import { JsonObjectPipe, ReadingPipe } from './pipes';
import { type LatestRow, ReadingsService } from './readings.service';
import { enrich, Lru, monteCarloPi, type Reading } from './work';

type RawRequest = RawBodyRequest<FastifyRequest>;

/** The body as received (rawBody: true in main.ts), which the contract stores in `payload`. */
const received = (request: RawRequest): string => request.rawBody!.toString('utf8');

@Controller()
export class ReadingsController {
  private readonly downstreamUrl =
    process.env.DOWNSTREAM_URL || `http://127.0.0.1:${process.env.PORT ?? 8080}/downstream`;
  private readonly cache = new Lru<LatestRow[]>(1000);
  private readonly enterpriseReading: Record<string, unknown>;
  private readonly enterprisePayload: string;

  constructor(private readonly readings: ReadingsService) {
    this.enterpriseReading = { ...readings.standard, deviceId: 'enterprise' };
    this.enterprisePayload = JSON.stringify(this.enterpriseReading);
  }

  @Post('ingest')
  @HttpCode(200)
  async ingest(@Body(ReadingPipe) body: Reading, @Req() request: RawRequest) {
    const start = performance.now();
    const id = this.readings.insert(body.deviceId, body.timestamp, received(request));
    await wait(50);
    return { id, processingMs: performance.now() - start };
  }

  @Post('ingest/fast')
  @HttpCode(200)
  ingestFast(@Body(JsonObjectPipe) body: Record<string, unknown>, @Req() request: RawRequest) {
    return { id: this.readings.insert(body.deviceId, body.timestamp, received(request)) };
  }

  @Post('ingest/realistic')
  @HttpCode(200)
  ingestRealistic(@Body(ReadingPipe) body: Reading, @Req() request: RawRequest) {
    const start = performance.now();
    const id = this.readings.insert(body.deviceId, body.timestamp, received(request));
    const { mean, min, max, stddev } = enrich(body);
    const pi = monteCarloPi(10_000);
    return { id, processingMs: performance.now() - start, mean, min, max, stddev, pi };
  }

  @Get('page')
  @Render('page.ejs')
  page() {
    return { readings: this.readings.page() };
  }

  @Get('enterprise')
  async enterprise() {
    const reading = this.enterpriseReading;
    // 1. insert
    const id = this.readings.insert(reading.deviceId, reading.timestamp, this.enterprisePayload);
    // 2. select the latest 10
    const rows = this.readings.latest10();
    // 3. file: write 4,096 bytes, read back, delete
    const json = JSON.stringify(rows);
    const content = json + ' '.repeat(Math.max(0, 4096 - Buffer.byteLength(json)));
    const file = join(os.tmpdir(), `iotbench-enterprise-${process.pid}-${id}.json`);
    await writeFile(file, content);
    const bytes = (await readFile(file)).length;
    await unlink(file);
    // 4. downstream call
    const response = await fetch(this.downstreamUrl);
    const downstreamBody = (await response.json()) as { ok?: unknown } | null;
    if (!response.ok) throw new Error(`downstream answered ${response.status}`);
    // 5. LRU cache
    const key = `device:${id % 100}`;
    const cacheHit = this.cache.get(key) !== undefined;
    if (!cacheHit) this.cache.set(key, rows);
    return { id, rows: rows.length, bytes, downstream: downstreamBody?.ok === true, cacheHit };
  }

  @Get('downstream')
  async downstream() {
    await wait(20);
    return { ok: true };
  }

  @Get('stats')
  stats() {
    return { rows: this.readings.count() };
  }
}
