import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Observable } from 'rxjs';
import type { AuthenticatedRequest } from '../auth/auth.decorators.js';
import { RateLimitService } from './rate-limit.service.js';

/**
 * Applies the organization's rate limit to every request an API key authenticated. It is an
 * interceptor rather than a second global guard because Nest runs interceptors after all guards,
 * so the API-key guard has always identified the organization first, whatever the order in which
 * modules register their global providers.
 */
@Injectable()
export class RateLimitInterceptor implements NestInterceptor {
  constructor(private readonly rateLimits: RateLimitService) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const http = context.switchToHttp();
    const principal = http.getRequest<Request & AuthenticatedRequest>().principal;
    if (principal) {
      const headers = await this.rateLimits.enforce(principal.organizationId);
      const res = http.getResponse<Response>();
      for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    }
    return next.handle();
  }
}
