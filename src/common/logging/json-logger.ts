import { LoggerService } from '@nestjs/common';
import type { LogLevel } from '../../config/app-config.js';
import { currentRequestContext } from './request-context.js';
import { currentTraceId } from '../tracing/tracing.js';

const SEVERITY: Record<LogLevel, number> = { error: 0, warn: 1, log: 2, debug: 3 };

/**
 * Nest's start-up chatter (every module initialised, every route mapped: over a hundred lines)
 * is written at debug level, so that a start at the default level shows what an operator needs.
 */
const BOOT_CHATTER = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

/**
 * One JSON object per line on stdout, with the request id, organization and assistant of the
 * request in progress. Callers pass messages and ids only: never keys, tokens or claim values.
 */
export class JsonLogger implements LoggerService {
  constructor(private readonly level: LogLevel = 'log') {}

  log(message: unknown, context?: string): void {
    this.write(context !== undefined && BOOT_CHATTER.has(context) ? 'debug' : 'log', message, context);
  }
  error(message: unknown, ...rest: unknown[]): void {
    // Nest passes (message, stack?, context?); the stack is deliberately dropped.
    const context = rest.length > 0 ? rest[rest.length - 1] : undefined;
    this.write('error', message, typeof context === 'string' ? context : undefined);
  }
  warn(message: unknown, context?: string): void {
    this.write('warn', message, context);
  }
  debug(message: unknown, context?: string): void {
    this.write('debug', message, context);
  }
  verbose(message: unknown, context?: string): void {
    this.write('debug', message, context);
  }

  /** Whether a line of this level is written: callers skip building a line that would be dropped. */
  writes(level: LogLevel): boolean {
    return SEVERITY[level] <= SEVERITY[this.level];
  }

  private write(level: LogLevel, message: unknown, context: string | undefined): void {
    if (!this.writes(level)) return;
    const request = currentRequestContext();
    const fields = typeof message === 'object' && message !== null ? message : { msg: String(message) };
    const line = JSON.stringify({
      level,
      time: new Date().toISOString(),
      context,
      requestId: request?.requestId,
      // The server's own id, when the client chose `requestId`: what the audit log records.
      serverRequestId: request?.serverRequestId === request?.requestId ? undefined : request?.serverRequestId,
      traceId: currentTraceId(),
      organizationId: request?.organizationId,
      assistantId: request?.assistantId,
      ...fields,
    });
    process.stdout.write(line + '\n');
  }
}
