import { createHash, timingSafeEqual } from 'node:crypto';
import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { ApiError } from '../common/errors/error-catalogue.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';

/**
 * With METRICS_TOKEN set, the scrape needs `Authorization: Bearer <token>`. Without one, /metrics
 * (organization and assistant ids in its labels) is open only when the platform says so with
 * METRICS_PUBLIC=true; otherwise every scrape is a 401.
 */
@Injectable()
export class MetricsTokenGuard implements CanActivate {
  private readonly expected: Buffer | undefined;
  private readonly open: boolean;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.expected = config.metrics.token === undefined ? undefined : digest(config.metrics.token);
    this.open = this.expected === undefined && config.metrics.public;
  }

  canActivate(context: ExecutionContext): boolean {
    if (this.open) return true;
    if (!this.expected) {
      throw new ApiError(
        'missing_token',
        'Metrics are closed: the operator sets METRICS_TOKEN (then send it in Authorization: Bearer) or METRICS_PUBLIC=true',
      );
    }
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
