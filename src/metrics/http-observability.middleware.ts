import { Injectable, Logger, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { currentRequestContext } from '../common/logging/request-context.js';
import { Metrics } from './metrics.service.js';

const PROCESSING_TIME_HEADER = 'x-processing-time-ms';

/** Probe and scrape routes: counted in metrics, logged only at debug level. */
const QUIET_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Per request: the `x-processing-time-ms` header (time until the headers leave, so for a stream the
 * time to its first byte), the request counter and latency histogram by route template, and one
 * access-log line. The line holds ids and the route template only, never the raw path, a header
 * value, a key or a body.
 */
@Injectable()
export class HttpObservabilityMiddleware implements NestMiddleware {
  private readonly logger = new Logger('Http');

  constructor(private readonly metrics: Metrics) {}

  use(req: Request, res: Response, next: NextFunction): void {
    const started = performance.now();
    // The same object the API-key guard later fills with the organization.
    const context = currentRequestContext();
    stampProcessingTime(res, started);
    res.once('close', () => {
      const durationMs = performance.now() - started;
      const route = routeTemplate(req, res);
      // 499 (as nginx logs it): the client left before any response was sent.
      const status = res.headersSent ? res.statusCode : 499;
      this.metrics.httpRequest(req.method, route, status, durationMs / 1000);
      const line = {
        msg: 'request',
        method: req.method,
        route,
        status,
        durationMs: Math.round(durationMs * 10) / 10,
        completed: res.writableFinished,
        requestId: context?.requestId,
        organizationId: context?.organizationId,
        assistantId: context?.assistantId,
      };
      if (QUIET_ROUTES.has(route)) this.logger.debug(line);
      else this.logger.log(line);
    });
    next();
  }
}

/**
 * The matched route's template (`/v1/user-claims/:userId`), so labels stay few; else the route a
 * middleware that answered before routing named in `res.locals.route`; else `unmatched`.
 */
function routeTemplate(req: Request, res: Response): string {
  const path: unknown = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof path === 'string') return `${req.baseUrl}${path}`;
  const named: unknown = res.locals.route;
  return typeof named === 'string' ? named : 'unmatched';
}

/** Sets the header at the last moment before the status line is written, however that happens. */
function stampProcessingTime(res: Response, started: number): void {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- re-applied with its own `this`
  const writeHead = res.writeHead as (this: Response, ...args: unknown[]) => Response;
  res.writeHead = function (this: Response, ...args: unknown[]) {
    if (!this.headersSent) {
      this.setHeader(PROCESSING_TIME_HEADER, String(Math.round(performance.now() - started)));
    }
    return writeHead.apply(this, args);
  } as Response['writeHead'];
}
