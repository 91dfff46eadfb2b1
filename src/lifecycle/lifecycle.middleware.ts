import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { LifecycleState } from './lifecycle.state.js';

/** Counts requests in flight for the shutdown sequence, and sends clients elsewhere once it began. */
@Injectable()
export class LifecycleMiddleware implements NestMiddleware {
  constructor(private readonly lifecycle: LifecycleState) {}

  use(_req: Request, res: Response, next: NextFunction): void {
    this.lifecycle.requestStarted();
    // 'close' fires once per response, whether it finished or the client went away.
    res.once('close', () => this.lifecycle.requestFinished());
    // Keep-alive connections would otherwise keep bringing requests to a replica that is leaving.
    if (this.lifecycle.shuttingDown) res.setHeader('Connection', 'close');
    next();
  }
}
