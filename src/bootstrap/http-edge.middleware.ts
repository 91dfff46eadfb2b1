import { Inject, Injectable, NestMiddleware } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Application, NextFunction, Request, Response } from 'express';
import { RequestEdge } from '../common/http/request-edge.middleware.js';
import { assignRequestId } from '../common/http/request-id.middleware.js';
import { requestContext, type RequestContext } from '../common/logging/request-context.js';
import { startHttpSpan } from '../common/tracing/http-tracing.middleware.js';
import { withActiveSpan } from '../common/tracing/tracing.js';
import { LifecycleState } from '../lifecycle/lifecycle.state.js';
import { HttpObservability, stampProcessingTime } from '../metrics/http-observability.js';

export const REQUEST_EDGE = Symbol('REQUEST_EDGE');

/** What the edge keeps on an admitted response until it closes. */
const ADMITTED = Symbol('admitted');
interface Admitted {
  started: number;
  context: RequestContext;
}
type AdmittedResponse = Response & { [ADMITTED]?: Admitted };

/**
 * The whole request edge as one middleware, in this order: every request gets its id (so every
 * answer and log line carries it), then its trace span (when tracing is on), then its target,
 * headers and body are checked (src/common/http/request-edge.middleware.ts; a refused request is
 * answered there and goes no further), then it is counted for shutdown and observed (metrics,
 * access log, processing time). One pass instead of a middleware per step: each Nest middleware
 * costs a router layer, a proxy and a per-request bookkeeping entry, and each step its own
 * `close` listener; here a request pays one of each and no closure but the body's callback.
 */
@Injectable()
export class HttpEdgeMiddleware implements NestMiddleware {
  /** Shared by every response (`this` is the response): lifecycle first, then metrics and log. */
  private readonly onClose: (this: AdmittedResponse) => void;
  private readonly admit = (req: Request, res: Response, next: NextFunction, context: RequestContext) =>
    this.admitted(req, res, next, context);

  constructor(
    @Inject(REQUEST_EDGE) private readonly edge: RequestEdge,
    private readonly lifecycle: LifecycleState,
    private readonly observability: HttpObservability,
    adapterHost: HttpAdapterHost,
  ) {
    // Express gives every response of the app this prototype (`app.response`).
    stampProcessingTime(adapterHost.httpAdapter.getInstance<Application & { response: object }>().response);
    const { observability: observed } = this;
    this.onClose = function (this: AdmittedResponse) {
      const admitted = this[ADMITTED];
      // 'close' fires once per response, whether it finished or the client went away; the
      // listener is shared (no per-request `once` wrapper), so a second call does nothing.
      if (admitted === undefined) return;
      this[ADMITTED] = undefined;
      lifecycle.requestFinished();
      observed.finish(this.req, this, admitted.started, admitted.context);
    };
  }

  use(req: Request, res: Response, next: NextFunction): void {
    const context: RequestContext = assignRequestId(req, res);
    requestContext.run(context, this.traced, req, res, next, context);
  }

  private readonly traced = (req: Request, res: Response, next: NextFunction, context: RequestContext) => {
    const span = startHttpSpan(req, res);
    if (span === null) this.edge.pass(req, res, next, this.admit, context);
    else withActiveSpan(span, () => this.edge.pass(req, res, next, this.admit, context));
  };

  private admitted(req: Request, res: Response, next: NextFunction, context: RequestContext): void {
    this.lifecycle.requestStarted();
    (res as AdmittedResponse)[ADMITTED] = { started: this.observability.begin(res), context };
    res.on('close', this.onClose);
    // Keep-alive connections would otherwise keep bringing requests to a replica that is leaving.
    if (this.lifecycle.shuttingDown) res.setHeader('Connection', 'close');
    next();
  }
}
