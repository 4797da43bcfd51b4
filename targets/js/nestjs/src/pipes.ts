import { BadRequestException, Injectable, type PipeTransform } from '@nestjs/common';

import { type Reading, validateReading } from '../../contract/work.js';

/** The contract's reading validation, in its order, as a Nest pipe on @Body(). */
@Injectable()
export class ReadingPipe implements PipeTransform<unknown, Reading> {
  transform(body: unknown): Reading {
    const problem = validateReading(body);
    if (problem) throw new BadRequestException(problem);
    return body as Reading;
  }
}

/** A parsed JSON object, no field checks (/ingest/fast). */
@Injectable()
export class JsonObjectPipe implements PipeTransform<unknown, Record<string, unknown>> {
  transform(body: unknown): Record<string, unknown> {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new BadRequestException('body must be a JSON object');
    }
    return body as Record<string, unknown>;
  }
}

/** /process-data: {"n": k} with k an integer from 1 to 40. */
@Injectable()
export class FibInputPipe implements PipeTransform<unknown, number> {
  transform(body: unknown): number {
    const n = (body as { n?: unknown } | null | undefined)?.n;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 40) {
      throw new BadRequestException('n must be an integer from 1 to 40');
    }
    return n;
  }
}

/** /blocking?ms=N: digits only, 0 to 10000, 500 when absent. */
@Injectable()
export class WaitMsPipe implements PipeTransform<unknown, number> {
  transform(raw: unknown): number {
    if (raw === undefined) return 500;
    const ms = typeof raw === 'string' && /^\d{1,5}$/.test(raw) ? Number(raw) : NaN;
    if (!(ms >= 0 && ms <= 10_000)) throw new BadRequestException('ms must be an integer from 0 to 10000');
    return ms;
  }
}
