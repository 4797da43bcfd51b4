import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException } from '@nestjs/common';
import type { FastifyReply } from 'fastify';

/**
 * Every error as the contract's {"error": message}: an HttpException keeps its status (400 from the
 * pipes, 404 for unknown routes), anything else is a 500. Nest's default body
 * ({"statusCode", "message", "error"}) has another shape.
 */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    if (exception instanceof HttpException) {
      reply.status(exception.getStatus()).send({ error: exception.message });
      return;
    }
    reply.status(500).send({ error: exception instanceof Error ? exception.message : String(exception) });
  }
}
