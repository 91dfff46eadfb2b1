import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { QueryFailedError, type EntityManager } from 'typeorm';
import { assertUnderQuota } from '../common/errors/quota.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { McpGatewayEntity } from './entities/mcp-gateway.entity.js';
import { McpGatewaysRepository } from './mcp-gateways.repository.js';
import type { DeletedRow } from '../database/delete-except.js';

export class GatewayInputError extends Error {}

export const GATEWAY_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** In `toolNames`, exposes every tool of the organization's catalogue, as it changes. */
export const ALL_TOOLS = '*';

export interface GatewayDeclaration {
  name: string;
  toolNames: readonly string[];
}

/** Gateways as the administrator configures them (CLI and `apply -f`). */
@Injectable()
export class McpGatewaysService {
  constructor(
    private readonly repository: McpGatewaysRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * The gateways a request URL names (one per organization using the name), with their
   * organization: the token's organization picks one (McpGatewayGuard).
   */
  findForRequest(name: string): Promise<McpGatewayEntity[]> {
    if (!GATEWAY_NAME.test(name)) return Promise.resolve([]);
    return this.repository.findAllByNameWithOrganization(name);
  }

  find(organizationId: string, name: string): Promise<McpGatewayEntity | null> {
    return this.repository.findForOrganization(organizationId, name);
  }

  list(organizationId: string): Promise<McpGatewayEntity[]> {
    return this.repository.listForOrganization(organizationId);
  }

  async create(organizationId: string, declaration: GatewayDeclaration): Promise<McpGatewayEntity> {
    const name = validateName(declaration.name);
    const toolNames = normalizeToolNames(declaration.toolNames);
    await this.assertNameFree(organizationId, name);
    await this.assertRoom(organizationId);
    return this.saveUnique(
      Object.assign(new McpGatewayEntity(), { id: randomUUID(), organizationId, name, toolNames }),
    );
  }

  /** Replaces the exposed tools; null when the organization has no gateway of that name. */
  async update(
    organizationId: string,
    name: string,
    changes: { toolNames: readonly string[] },
  ): Promise<McpGatewayEntity | null> {
    const gateway = await this.repository.findForOrganization(organizationId, name);
    if (!gateway) return null;
    gateway.toolNames = normalizeToolNames(changes.toolNames);
    return this.repository.save(gateway);
  }

  /** `manager` joins the caller's transaction (the admin API's audited delete). */
  delete(organizationId: string, name: string, manager?: EntityManager): Promise<boolean> {
    return this.repository.deleteForOrganization(organizationId, name, manager);
  }

  /**
   * Creates or updates the organization's gateway of this name inside the caller's transaction
   * (the admin `apply`). Names are per organization: another organization's gateway of the same
   * name is neither seen nor touched.
   */
  async upsertByName(
    organizationId: string,
    declaration: GatewayDeclaration,
    manager: EntityManager,
  ): Promise<{ gateway: McpGatewayEntity; action: 'created' | 'updated' | 'unchanged' }> {
    const name = validateName(declaration.name);
    const toolNames = normalizeToolNames(declaration.toolNames);
    const existing = await this.repository.findForOrganization(organizationId, name, manager);
    if (!existing) {
      await this.assertRoom(organizationId, manager);
      const gateway = Object.assign(new McpGatewayEntity(), {
        id: randomUUID(),
        organizationId,
        name,
        toolNames,
      });
      return { gateway: await this.repository.save(gateway, manager), action: 'created' };
    }
    if (sameList(existing.toolNames, toolNames)) return { gateway: existing, action: 'unchanged' };
    existing.toolNames = toolNames;
    return { gateway: await this.repository.save(existing, manager), action: 'updated' };
  }

  /** 409 quota_exceeded when the organization has QUOTA_GATEWAYS_PER_ORGANIZATION gateways. */
  private async assertRoom(organizationId: string, manager?: EntityManager): Promise<void> {
    const count = await this.repository.countForOrganization(organizationId, manager);
    assertUnderQuota(
      count,
      this.config.quotas.gatewaysPerOrganization,
      'MCP gateways',
      'QUOTA_GATEWAYS_PER_ORGANIZATION',
    );
  }

  private async assertNameFree(organizationId: string, name: string): Promise<void> {
    if (await this.repository.findForOrganization(organizationId, name)) {
      throw new GatewayInputError(`the organization already has a gateway named "${name}"`);
    }
  }

  /** The unique constraint (organization, name) decides a race between two creators of one name. */
  private async saveUnique(gateway: McpGatewayEntity): Promise<McpGatewayEntity> {
    try {
      return await this.repository.save(gateway);
    } catch (error) {
      const code = (error as { driverError?: { code?: unknown } }).driverError?.code;
      if (error instanceof QueryFailedError && code === '23505') {
        throw new GatewayInputError(`the organization already has a gateway named "${gateway.name}"`);
      }
      throw error;
    }
  }

  /** `apply --prune`: deletes the organization's gateways not named in `keep`. */
  pruneExcept(
    organizationId: string,
    keep: readonly string[],
    manager: EntityManager,
  ): Promise<DeletedRow[]> {
    return this.repository.deleteExcept(organizationId, keep, manager);
  }
}

function validateName(name: string): string {
  if (!GATEWAY_NAME.test(name)) {
    throw new GatewayInputError(
      `gateway name "${name}" must be 1-63 lowercase letters, digits or dashes, starting with a letter or digit`,
    );
  }
  return name;
}

/** Deduplicated, in the order given; `*` stands alone. */
export function normalizeToolNames(toolNames: readonly string[]): string[] {
  const names = [...new Set(toolNames.map((name) => name.trim()).filter((name) => name.length > 0))];
  if (names.includes(ALL_TOOLS)) {
    if (names.length > 1) throw new GatewayInputError(`"${ALL_TOOLS}" exposes every tool; list it alone`);
    return names;
  }
  const invalid = names.find((name) => !TOOL_NAME.test(name));
  if (invalid !== undefined) {
    throw new GatewayInputError(`tool name "${invalid}" must match ^[a-zA-Z0-9_-]{1,64}$`);
  }
  return names;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, index) => item === b[index]);
}
