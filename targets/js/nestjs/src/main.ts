// iotbench target: NestJS 11 with the Fastify adapter. One process, one event loop, on Node 24 or
// on Bun (the same compiled JavaScript). The contract is docs/contract.md at the root of the repository.
import 'reflect-metadata';

import { join } from 'node:path';

import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import ejs from 'ejs';

import { fastifyProtocolOptions, servedProtocol } from '../../contract/protocol.js';
import { startSignals } from '../../contract/signals.js';
import { AppModule } from './app.module';
import { ErrorFilter } from './error.filter';
import { ReadingsService } from './readings.service';

const PORT = Number(process.env.PORT ?? 8080);
// The address it listens on: loopback, unless a run on a remote Docker engine names that host's (docs/scale.md).
const BIND_ADDRESS = process.env.BIND_ADDRESS || '127.0.0.1';

// The Fastify adapter serves every protocol as Fastify does (node:https, node:http2).
const PROTOCOL = servedProtocol(['http1', 'https', 'h2', 'h2c']);

async function main(): Promise<void> {
  const adapter = new FastifyAdapter({
    ...(fastifyProtocolOptions(PROTOCOL) as object),
    logger: false,
    // Idle keep-alive connections stay open 65 s (Node's own default is 5 s): the load generator
    // reuses its connections across pauses between phases. No limit on requests per connection.
    keepAliveTimeout: 65_000,
    // Fastify's default, 1 MiB, stated: the payload sweep reaches 256 KB.
    bodyLimit: 1_048_576,
  });
  // logger: false — nothing logged, not even Nest's startup lines; rawBody: the body as received;
  // abortOnError: false — a provider that fails (a bad READINGS_KEEP or SQLITE_DRIVER) is thrown to
  // main's catch, which prints it, instead of an exit that the disabled logger leaves silent.
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, adapter, {
    logger: false,
    rawBody: true,
    abortOnError: false,
  });
  app.useGlobalFilters(new ErrorFilter());
  app.setViewEngine({
    engine: { ejs },
    templates: join(__dirname, '..', '..', 'contract', 'views'),
    production: true, // compile each template once and cache it
  });

  // The runtime is PID 1 in the container and has no default signal handling: close and exit.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      app.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    });
  }

  // The table and seeds exist, and on PostgreSQL the pool is open, before the first request.
  await app.get(ReadingsService).readings.ready;
  // GET /signals on SIGNALS_PORT, when set: its own node:http server, not Nest's.
  await startSignals();
  await app.listen(PORT, BIND_ADDRESS);
  const runtime = process.versions.bun ? `bun ${process.versions.bun}` : `node ${process.versions.node}`;
  console.log(`nestjs on ${runtime} serving ${PROTOCOL} on ${BIND_ADDRESS}:${PORT} (started in ${Math.round(process.uptime() * 1000)} ms)`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
