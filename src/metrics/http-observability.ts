import { Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { JsonLogger } from '../common/logging/json-logger.js';
import type { RequestContext } from '../common/logging/request-context.js';
import type { LogLevel } from '../config/app-config.js';
import { Metrics } from './metrics.service.js';

const PROCESSING_TIME_HEADER = 'x-processing-time-ms';

/** Probe and scrape routes: counted in metrics, logged only at debug level. */
const QUIET_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

/** When the edge admitted a response; read by the `writeHead` that `stampProcessingTime` installs. */
const OBSERVED_SINCE = Symbol('observedSince');
type ObservedResponse = Response & { [OBSERVED_SINCE]?: number };

/**
 * Per request the edge admits (src/bootstrap/http-edge.middleware.ts): the `x-processing-time-ms`
 * header (time until the headers leave, so for a stream the time to its first byte), the request
 * counter and latency histogram by route template, and one access-log line. The line holds ids
 * and the route template only, never the raw path, a header value, a key or a body.
 */
@Injectable()
export class HttpObservability {
  private readonly logger = new Logger('Http');
  /** Whether the app's logger writes a line of this level; every level until `useLogger`. */
  private writes: (level: LogLevel) => boolean = () => true;

  constructor(private readonly metrics: Metrics) {}

  /** The app's logger (false: none), so that an access line is built only when it will be written. */
  useLogger(logger: JsonLogger | false): void {
    this.writes = logger === false ? () => false : (level) => logger.writes(level);
  }

  /** Starts the clock of `res`; returns the start for `finish`. */
  begin(res: Response): number {
    const started = performance.now();
    (res as ObservedResponse)[OBSERVED_SINCE] = started;
    return started;
  }

  /** Once the response closed. `context` is the object the API-key guard filled with the organization. */
  finish(req: Request, res: Response, started: number, context: RequestContext): void {
    const durationMs = performance.now() - started;
    const route = routeTemplate(req, res);
    // 499 (as nginx logs it): the client left before any response was sent.
    const status = res.headersSent ? res.statusCode : 499;
    this.metrics.httpRequest(req.method, route, status, durationMs / 1000);
    const quiet = QUIET_ROUTES.has(route);
    // Not built when dropped: the bench and many deployments run at LOG_LEVEL=error.
    if (!this.writes(quiet ? 'debug' : 'log')) return;
    const line = {
      msg: 'request',
      method: req.method,
      route,
      status,
      durationMs: Math.round(durationMs * 10) / 10,
      completed: res.writableFinished,
      requestId: context.requestId,
      organizationId: context.organizationId,
      assistantId: context.assistantId,
    };
    if (quiet) this.logger.debug(line);
    else this.logger.log(line);
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

/**
 * Sets the header at the last moment before the status line is written, however that happens,
 * on responses `begin` started. Installed once on the app's response prototype (`app.response`)
 * rather than per request, so a request allocates no wrapper and every response keeps one shape.
 */
export function stampProcessingTime(responsePrototype: object): void {
  const proto = responsePrototype as Response;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- re-applied with its own `this`
  const writeHead = proto.writeHead as (this: Response, ...args: unknown[]) => Response;
  proto.writeHead = function (this: ObservedResponse, ...args: unknown[]) {
    const started = this[OBSERVED_SINCE];
    if (started !== undefined && !this.headersSent) {
      this.setHeader(PROCESSING_TIME_HEADER, String(Math.round(performance.now() - started)));
    }
    return writeHead.apply(this, args);
  } as Response['writeHead'];
}
