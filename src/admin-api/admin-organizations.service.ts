import { Injectable } from '@nestjs/common';
import { ApplyService } from '../admin-framework/apply/apply.service.js';
import type { ApplyDocument } from '../admin-framework/apply/apply-document.js';
import { AuditLogService, decodeAuditCursor } from '../admin-framework/audit/audit-log.service.js';
import { apiKeyView } from '../api-keys/admin/keys.commands.js';
import { ApiKeysService } from '../api-keys/api-keys.service.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import { organizationView } from '../organizations/admin/organizations.commands.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { auditActor, type AdminCaller } from './admin-caller.js';
import { AdminScope, clientErrors } from './admin-scope.service.js';
import type { AuditLogQueryDto, CreateApiKeyDto, PutOrganizationDto } from './dto/admin-bodies.dto.js';
import { auditLogView, declaredOrganizations, platformFieldsIn } from './admin-views.js';

const AUDIT_PAGE_DEFAULT = 50;

/** Organizations, their API keys, `apply` and the audit log, for both kinds of admin caller. */
@Injectable()
export class AdminOrganizationsService {
  constructor(
    private readonly scope: AdminScope,
    private readonly organizations: OrganizationsService,
    private readonly apiKeys: ApiKeysService,
    private readonly applyService: ApplyService,
    private readonly audit: AuditLogService,
  ) {}

  async list(caller: AdminCaller) {
    return (await this.scope.visibleOrganizations(caller)).map(organizationView);
  }

  async get(caller: AdminCaller, ref: string) {
    return organizationView(await this.scope.organization(caller, ref));
  }

  /**
   * Creates or updates the organization with this slug. An organization key may rename its own
   * organization only (named by its slug or id, it always writes its own row): creating
   * organizations, touching another and the platform-only fields are 403 insufficient_scope.
   */
  async put(caller: AdminCaller, ref: string, body: PutOrganizationDto) {
    let slug = ref;
    if (caller.kind === 'organization') {
      const own = await this.organizations.findById(caller.organizationId);
      if (!own || (ref !== own.slug && ref !== own.id)) {
        throw new ApiError(
          'insufficient_scope',
          "An organization's admin key manages its own organization only; creating organizations is the platform's",
        );
      }
      slug = own.slug;
      refusePlatformFields(platformFieldsIn(body as Record<string, unknown>), 'the body');
    }
    if (body.embeddings !== undefined) {
      throw new ApiError(
        'invalid_request',
        "embeddings is set with apply (POST /admin/v1/apply, or the CLI's apply -f), not with PUT",
      );
    }
    return this.scope.write(caller, async (manager) => {
      const before = await this.organizations.findBySlug(slug, manager);
      const beforeView = before ? organizationView(before) : undefined;
      const { organization, action } = await this.organizations.upsertBySlug(
        {
          slug,
          name: body.name,
          rateLimitPerMinute: body.rateLimitPerMinute,
          monthlyTokenBudget: body.monthlyTokenBudget,
          secretEnvGrants: body.secretEnvGrants,
          ssrfAllowlist: body.ssrfAllowlist,
        },
        manager,
      );
      const after = organizationView(organization);
      const changes =
        action === 'unchanged'
          ? []
          : [
              {
                organizationId: organization.id,
                action,
                resourceType: 'organization',
                resourceId: organization.id,
                before: beforeView,
                after,
              },
            ];
      return { value: { ...after, action }, changes };
    });
  }

  async listKeys(caller: AdminCaller, ref: string) {
    const organization = await this.scope.organization(caller, ref);
    return (await this.apiKeys.list(organization.id)).map(apiKeyView);
  }

  /** The secret is in this answer only; the audit row never holds it nor its hash. */
  async createKey(caller: AdminCaller, ref: string, body: CreateApiKeyDto) {
    const organization = await this.scope.organization(caller, ref);
    return this.scope.write(caller, async (manager) => {
      const { key, secret } = await this.apiKeys.create(organization.id, body.name, body.scopes, manager);
      const after = apiKeyView(key);
      return {
        value: { ...after, secret },
        changes: [
          {
            organizationId: organization.id,
            action: 'created',
            resourceType: 'api_key',
            resourceId: key.id,
            after,
          },
        ],
      };
    });
  }

  async revokeKey(caller: AdminCaller, ref: string, keyId: string) {
    const organization = await this.scope.organization(caller, ref);
    const missing = () => new ApiError('not_found', 'No active API key with this id in this organization');
    const key = /^[0-9a-f-]{36}$/i.test(keyId) ? await this.apiKeys.find(organization.id, keyId) : null;
    if (!key || key.revokedAt) throw missing();
    const before = apiKeyView(key);
    return this.scope.write(caller, async (manager) => {
      if (!(await this.apiKeys.revoke(organization.id, keyId, manager))) throw missing();
      const after = { ...before, revokedAt: new Date().toISOString() };
      return {
        value: after,
        changes: [
          {
            organizationId: organization.id,
            action: 'revoked',
            resourceType: 'api_key',
            resourceId: keyId,
            before,
            after,
          },
        ],
      };
    });
  }

  /**
   * The CLI's `apply`, with its report; the audit rows (one per created, updated or deleted item,
   * with its row before and after) are written in the apply's transaction. An organization key may only name its own organization.
   */
  async apply(caller: AdminCaller, document: unknown, options: { dryRun: boolean; prune: boolean }) {
    const { dryRun, prune } = options;
    const declared = declaredOrganizations(document);
    if (caller.kind === 'organization') {
      for (const { index, slug, platformFields } of declared) {
        await this.scope.organization(caller, slug);
        refusePlatformFields(platformFields, `organizations[${index}]`);
      }
    }
    const report = await clientErrors(() =>
      this.scope.asAuthor(caller, () =>
        this.applyService.apply(document as ApplyDocument, { dryRun, prune, audit: auditActor(caller) }),
      ),
    );
    return { dryRun, changes: report.changes, summary: report.summary() };
  }

  async auditLog(caller: AdminCaller, query: AuditLogQueryDto) {
    let organizationId: string | null = null;
    if (caller.kind === 'organization') organizationId = caller.organizationId;
    else if (query.organization !== undefined) {
      organizationId = (await this.scope.organization(caller, query.organization)).id;
    }
    const after = query.after ? decodeAuditCursor(query.after) : null;
    if (query.after && !after)
      throw new ApiError('invalid_request', 'after is not a cursor this endpoint returned');
    const page = await this.audit.page(organizationId, query.limit ?? AUDIT_PAGE_DEFAULT, after);
    return { object: 'list', data: page.items.map(auditLogView), next_cursor: page.nextCursor };
  }
}

/** 403 naming the first platform-only field an organization caller stated (PLATFORM_ONLY_FIELDS). */
function refusePlatformFields(fields: readonly string[], where: string): void {
  if (fields.length > 0) {
    throw new ApiError(
      'insufficient_scope',
      `${where}: ${fields[0]} is set by the platform only; an organization's admin key cannot change it`,
    );
  }
}
