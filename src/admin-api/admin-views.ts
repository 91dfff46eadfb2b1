import type { AuditLogEntity } from '../admin-framework/audit/audit-log.entity.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import { PLATFORM_ONLY_FIELDS } from '../organizations/organizations.service.js';

/** One audit row as the API shows it. */
export function auditLogView(row: AuditLogEntity) {
  return {
    id: row.id,
    organizationId: row.organizationId,
    actor: { type: row.actorType, id: row.actorId, issuer: row.actorIssuer },
    action: row.action,
    resourceType: row.resourceType,
    resourceId: row.resourceId,
    before: row.before ?? null,
    after: row.after ?? null,
    requestId: row.requestId,
    clientRequestId: row.clientRequestId,
    createdAt: row.createdAt.toISOString(),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The platform-only fields (PLATFORM_ONLY_FIELDS) an object states, with a value or null. */
export function platformFieldsIn(value: Record<string, unknown>): string[] {
  return PLATFORM_ONLY_FIELDS.filter((field) => value[field] !== undefined);
}

/**
 * The `organizations[]` entries of an apply document (slug and the platform-only fields it
 * states), for the caller check before anything runs; the document's own errors are `apply`'s
 * to report.
 */
export function declaredOrganizations(
  document: unknown,
): { index: number; slug: string; platformFields: string[] }[] {
  if (!isObject(document)) {
    throw new ApiError('invalid_request', 'The body must be an apply document: a JSON object');
  }
  const entries = Array.isArray(document.organizations) ? document.organizations : [];
  // `keyFromEnv` reads the environment of the process that applies: over HTTP, the service's own,
  // which is not the caller's to name. Keys are issued with POST .../keys instead.
  const withKeys = entries.findIndex((entry) => isObject(entry) && Object.hasOwn(entry, 'apiKeys'));
  if (withKeys >= 0) {
    throw new ApiError(
      'invalid_request',
      `organizations[${withKeys}].apiKeys: keys are not declared over HTTP (keyFromEnv would read the service's environment); issue them with POST /admin/v1/organizations/{org}/keys`,
    );
  }
  return entries.flatMap((entry: unknown, index: number) =>
    isObject(entry) && typeof entry.slug === 'string'
      ? [{ index, slug: entry.slug, platformFields: platformFieldsIn(entry) }]
      : [],
  );
}
