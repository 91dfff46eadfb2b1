import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApplyError } from '../admin-framework/apply/apply-document.js';
import { auditActor, type AdminCaller } from './admin-caller.js';
import { AuditLogService, type AuditChange } from '../admin-framework/audit/audit-log.service.js';
import { ApiKeyInputError } from '../api-keys/api-keys.service.js';
import { AssistantInputError } from '../assistants/assistants.service.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import { TransactionalConnection } from '../database/transactional-connection.js';
import { writingAs } from '../tenant-config/config-author.js';
import { GatewayInputError } from '../mcp-gateway/mcp-gateways.service.js';
import type { OrganizationEntity } from '../organizations/entities/organization.entity.js';
import { OrganizationInputError, OrganizationsService } from '../organizations/organizations.service.js';
import { SpecialistInputError } from '../specialists/specialists.service.js';
import { ToolInputError } from '../tools/tools.service.js';

/** The services' own input errors: their messages are written for the administrator. */
const INPUT_ERRORS = [
  OrganizationInputError,
  AssistantInputError,
  SpecialistInputError,
  ToolInputError,
  GatewayInputError,
  ApiKeyInputError,
  ApplyError,
];

/**
 * What every admin operation shares: the organization a caller may see (the tenant boundary) and
 * the audited write (the change and its audit rows in one transaction).
 */
@Injectable()
export class AdminScope {
  constructor(
    private readonly organizations: OrganizationsService,
    private readonly connection: TransactionalConnection,
    private readonly audit: AuditLogService,
  ) {}

  /**
   * The organization `ref` (slug or id) names, if the caller may manage it. An organization key
   * only ever reads its own organization's row, so another organization is the same 404 as one
   * that does not exist.
   */
  async organization(caller: AdminCaller, ref: string): Promise<OrganizationEntity> {
    const organization =
      caller.kind === 'organization'
        ? await this.organizations.findById(caller.organizationId)
        : await this.organizations.find(ref);
    if (!organization || (organization.slug !== ref && organization.id !== ref)) {
      throw new ApiError('not_found', `No organization "${ref}"`);
    }
    return organization;
  }

  /** The organizations a caller sees in lists: all of them, or its own. */
  async visibleOrganizations(caller: AdminCaller): Promise<OrganizationEntity[]> {
    if (caller.kind === 'platform') return this.organizations.list();
    const own = await this.organizations.findById(caller.organizationId);
    return own ? [own] : [];
  }

  /**
   * Runs `work` in one transaction with the audit rows it returns; an input error of a service
   * becomes 400 invalid_request, and nothing is written.
   */
  async write<T>(
    caller: AdminCaller,
    work: (manager: EntityManager) => Promise<{ value: T; changes: AuditChange[] }>,
  ): Promise<T> {
    return clientErrors(() =>
      this.asAuthor(caller, () =>
        this.connection.withTransaction(async (manager) => {
          const { value, changes } = await work(manager);
          await this.recordIn(manager, caller, changes);
          return value;
        }),
      ),
    );
  }

  /**
   * Runs a write as the caller's: an organization key's writes are what TenantConfigPolicy
   * checks against its organization's grants and allowlist; a platform token's are the platform's.
   */
  asAuthor<T>(caller: AdminCaller, work: () => Promise<T>): Promise<T> {
    return writingAs(
      caller.kind === 'organization'
        ? { kind: 'organization', organizationId: caller.organizationId }
        : { kind: 'platform' },
      work,
    );
  }

  /** Audit rows inside a transaction someone else opened (`apply`). */
  recordIn(manager: EntityManager, caller: AdminCaller, changes: AuditChange[]): Promise<void> {
    return this.audit.record(manager, auditActor(caller), changes);
  }
}

/** A service's input error as the client's 400; anything else unchanged. */
export async function clientErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (INPUT_ERRORS.some((type) => error instanceof type)) {
      throw new ApiError('invalid_request', (error as Error).message);
    }
    throw error;
  }
}
