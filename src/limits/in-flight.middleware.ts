import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { InFlightLimiter } from './in-flight-limiter.service.js';

/** Set on `res.locals` for a request holding a replica slot; RateLimitGuard adds its organization's share. */
export const HOLDS_IN_FLIGHT_SLOT = 'holdsInFlightSlot';

/**
 * Holds a slot of the in-flight cap from the moment a response request arrives until its
 * response ends (for a stream, until it closes or the client leaves). It runs before
 * authentication on purpose: shedding costs nothing, and refused requests use no rate-limit quota.
 * Once the key names the organization, RateLimitGuard counts the slot against that
 * organization's share too.
 */
@Injectable()
export class InFlightMiddleware implements NestMiddleware {
  constructor(private readonly limiter: InFlightLimiter) {}

  use(_req: Request, res: Response, next: NextFunction): void {
    // A refused request never reaches the router; this names its route for metrics and logs.
    res.locals.route = '/v1/responses';
    // Throws 503 service_overloaded; Nest turns it into the envelope through the global filter.
    const release = this.limiter.acquire();
    res.once('close', release);
    res.locals[HOLDS_IN_FLIGHT_SLOT] = true;
    next();
  }
}
