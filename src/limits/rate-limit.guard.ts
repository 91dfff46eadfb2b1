import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { AuthenticatedRequest } from '../auth/auth.decorators.js';
import { InFlightLimiter } from './in-flight-limiter.service.js';
import { HOLDS_IN_FLIGHT_SLOT } from './in-flight.middleware.js';
import { RateLimitService } from './rate-limit.service.js';

/**
 * Applies the organization's rate limit to every request an API key authenticated, and counts a
 * response request (which holds a slot of the in-flight cap) against the organization's share of
 * that cap. The composition root (AppModule) registers it as the global guard right after the
 * API-key guard, which has then identified the organization. A guard rather than an interceptor:
 * any global interceptor makes Nest run every request through an RxJS chain that lives as long as
 * a stream (measured: CPU and ~10 KiB per open stream; docs/benchmarks.md).
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(
    private readonly rateLimits: RateLimitService,
    private readonly inFlight: InFlightLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const principal = http.getRequest<Request & AuthenticatedRequest>().principal;
    // Public routes and the MCP gateway's own authentication carry no API-key principal.
    if (!principal) return true;
    const headers = await this.rateLimits.enforce(principal.organizationId);
    const res = http.getResponse<Response>();
    for (const name in headers) res.setHeader(name, headers[name]);
    if (res.locals[HOLDS_IN_FLIGHT_SLOT] === true) {
      const release = this.inFlight.admitOrganization(principal.organizationId);
      if (res.closed) release();
      else res.once('close', release);
    }
    return true;
  }
}
