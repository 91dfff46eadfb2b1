import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { AuditActor } from '../admin-framework/audit/audit-log.service.js';

/**
 * Who calls the admin API: an organization's `admin` key (that organization only), or a platform
 * administrator (a token of the identity provider, member of ADMIN_GROUP: every organization).
 */
export type AdminCaller =
  | { kind: 'organization'; organizationId: string; keyId: string }
  | { kind: 'platform'; subject: string; issuer: string };

export interface AdminRequest {
  adminCaller?: AdminCaller;
}

export function auditActor(caller: AdminCaller): AuditActor {
  return caller.kind === 'organization'
    ? { type: 'api_key', id: caller.keyId }
    : { type: 'oidc', id: caller.subject, issuer: caller.issuer };
}

/** The caller `@AdminAccess()` established. */
export const Caller = createParamDecorator((_data: unknown, context: ExecutionContext): AdminCaller => {
  const caller = context.switchToHttp().getRequest<AdminRequest>().adminCaller;
  if (!caller) throw new Error('Caller used on a route without @AdminAccess()');
  return caller;
});
