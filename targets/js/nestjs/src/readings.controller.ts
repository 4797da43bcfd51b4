import { performance } from 'node:perf_hooks';

import { Body, Controller, Get, HttpCode, Post, type RawBodyRequest, Render, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

import { enterprise as enterpriseSteps } from '../../contract/enterprise.js';
import { enrich, Lru, monteCarloPi, sleep, type Reading } from '../../contract/work.js';
import { JsonObjectPipe, ReadingPipe } from './pipes';
import { type LatestRow, ReadingsService } from './readings.service';

type RawRequest = RawBodyRequest<FastifyRequest>;

/** The body as received (rawBody: true in main.ts), which the contract stores in `payload`. */
const received = (request: RawRequest): string => request.rawBody!.toString('utf8');

@Controller()
export class ReadingsController {
  private readonly downstreamUrl =
    process.env.DOWNSTREAM_URL || `http://127.0.0.1:${process.env.PORT ?? 8080}/downstream`;
  private readonly cache = new Lru<LatestRow[]>(1000);

  constructor(private readonly readings: ReadingsService) {}

  @Post('ingest')
  @HttpCode(200)
  async ingest(@Body(ReadingPipe) body: Reading, @Req() request: RawRequest) {
    const start = performance.now();
    const id = await this.readings.insert(body.deviceId, body.timestamp, received(request));
    await sleep(50);
    return { id, processingMs: performance.now() - start };
  }

  @Post('ingest/fast')
  @HttpCode(200)
  async ingestFast(@Body(JsonObjectPipe) body: Record<string, unknown>, @Req() request: RawRequest) {
    return { id: await this.readings.insert(body.deviceId, body.timestamp, received(request)) };
  }

  @Post('ingest/realistic')
  @HttpCode(200)
  async ingestRealistic(@Body(ReadingPipe) body: Reading, @Req() request: RawRequest) {
    const start = performance.now();
    const id = await this.readings.insert(body.deviceId, body.timestamp, received(request));
    const { mean, min, max, stddev } = enrich(body);
    const pi = monteCarloPi(10_000);
    return { id, processingMs: performance.now() - start, mean, min, max, stddev, pi };
  }

  @Get('page')
  @Render('page.ejs')
  async page() {
    return { readings: await this.readings.page() };
  }

  @Get('enterprise')
  enterprise() {
    return enterpriseSteps(this.readings.readings, this.cache, this.downstreamUrl);
  }

  @Get('downstream')
  async downstream() {
    await sleep(20);
    return { ok: true };
  }

  @Get('stats')
  async stats() {
    return { rows: await this.readings.count() };
  }
}
