
import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';

import { fanOut } from '../../contract/fanout.js';
import { countPrimes, fib, matrixTrace, monteCarloPi, sleep } from '../../contract/work.js';
import { FibInputPipe, WaitMsPipe } from './pipes';

/** CPU work and waits, no database. */
@Controller()
export class WorkController {
  @Get('cpu')
  cpu() {
    return { pi: monteCarloPi(1_000_000), trace: matrixTrace(), primes: countPrimes(100_000) };
  }

  @Get('blocking')
  async blocking(@Query('ms', WaitMsPipe) ms: number) {
    await sleep(ms);
    return { waitedMs: ms };
  }

  @Get('fanout')
  fanout() {
    return fanOut();
  }

  @Post('process-data')
  @HttpCode(200)
  processData(@Body(FibInputPipe) n: number) {
    return { n, result: fib(n) };
  }
}
