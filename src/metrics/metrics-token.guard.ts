import { createHash, timingSafeEqual } from 'node:crypto';
import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { ApiError } from '../common/errors/error-catalogue.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';

/** With METRICS_TOKEN set, the scrape needs `Authorization: Bearer <token>`; otherwise it is open. */
@Injectable()
export class MetricsTokenGuard implements CanActivate {
  private readonly expected: Buffer | undefined;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.expected = config.metrics.token === undefined ? undefined : digest(config.metrics.token);
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.expected) return true;
    const authorization = context.switchToHttp().getRequest<Request>().headers.authorization;
    const match = authorization ? /^Bearer\s+(.+)$/i.exec(authorization) : null;
    if (!match) throw new ApiError('missing_token', 'Send the metrics token in Authorization: Bearer');
    // Comparing fixed-length digests keeps the comparison constant-time whatever was sent.
    if (!timingSafeEqual(digest(match[1].trim()), this.expected)) {
      throw new ApiError('invalid_token', 'The metrics token is not valid');
    }
    return true;
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
