import { CallHandler, ExecutionContext, Injectable, Logger, NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import { catchError, from, mergeMap, type Observable, throwError } from 'rxjs';
import { AuditLogService } from '../admin-framework/audit/audit-log.service.js';
import { describeUnexpected } from '../common/errors/all-exceptions.filter.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import { auditActor, type AdminRequest } from './admin-caller.js';

/** Refusals of an identified admin caller that the audit log keeps. */
const DENIED_STATUSES = new Set([403, 404]);

/**
 * Audits what an authenticated admin caller was refused (403, or 404 for something it may not
 * see: another organization's resources look like missing ones): action `denied`, the route as
 * the resource, the answer's code in `after`. Written on its own, since nothing changed, before
 * the refusal is answered. A failure to write it is logged and never replaces the refusal.
 */
@Injectable()
export class DeniedAttemptsInterceptor implements NestInterceptor {
  private readonly logger = new Logger('Audit');

  constructor(private readonly audit: AuditLogService) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<Request & AdminRequest>();
    return next.handle().pipe(
      catchError((error: unknown) => {
        const caller = req.adminCaller;
        if (!caller || !(error instanceof ApiError) || !DENIED_STATUSES.has(error.status)) {
          return throwError(() => error);
        }
        const route = `${req.method} ${req.originalUrl.split('?')[0]}`.slice(0, 255);
        const written = this.audit
          .record(undefined, auditActor(caller), [
            {
              organizationId: caller.kind === 'organization' ? caller.organizationId : null,
              action: 'denied',
              resourceType: 'request',
              resourceId: route,
              after: { status: error.status, code: error.code },
            },
          ])
          .catch((failure: unknown) => {
            this.logger.error({
              ...describeUnexpected(failure),
              msg: 'a denied admin request could not be audited',
            });
          });
        return from(written).pipe(mergeMap(() => throwError(() => error)));
      }),
    );
  }
}
