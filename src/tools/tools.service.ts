import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { assertUnderQuota } from '../common/errors/quota.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { PluginEntity, type PluginOAuth } from './entities/plugin.entity.js';
import { ToolEntity } from './entities/tool.entity.js';
import {
  isObject,
  isProviderId,
  parseToolConfig,
  TOOL_KINDS,
  TOOL_NAME,
  ToolConfigError,
  type McpServerConfig,
  type RestToolConfig,
  type ToolKind,
} from './tool-config.js';
import { ToolsRepository } from './tools.repository.js';
import type { DeletedRow } from '../database/delete-except.js';
import { toolReferences } from './tool-references.js';
import { TenantConfigPolicy } from '../tenant-config/tenant-config.policy.js';

/** A mistake in a tool or plugin declaration; the message names the field. */
export class ToolInputError extends Error {}

export type UpsertAction = 'created' | 'updated' | 'unchanged';

export interface PluginInput {
  name: string;
  /** Undefined keeps the current value; null removes it. */
  oauth?: unknown;
}

export interface ToolInput {
  name: string;
  kind: unknown;
  config: unknown;
  /** Undefined keeps the current value. */
  description?: string;
  /** A plugin name of the organization; undefined keeps the current plugin, null removes it. */
  plugin?: string | null;
}

const MAX_DESCRIPTION_CHARS = 4000;

/** Administration of an organization's tool catalogue: the CLI and `apply -f` write through here. */
@Injectable()
export class ToolsService {
  constructor(
    private readonly repository: ToolsRepository,
    private readonly policy: TenantConfigPolicy,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  list(organizationId: string): Promise<ToolEntity[]> {
    return this.repository.listWithPlugins(organizationId);
  }

  find(organizationId: string, name: string, manager?: EntityManager): Promise<ToolEntity | null> {
    return this.repository.findByNameWithPlugin(organizationId, name, manager);
  }

  /** `manager` joins the caller's transaction (the admin API's audited delete). */
  delete(organizationId: string, name: string, manager?: EntityManager): Promise<boolean> {
    return this.repository.deleteByName(organizationId, name, manager);
  }

  listPlugins(organizationId: string): Promise<PluginEntity[]> {
    return this.repository.listPlugins(organizationId);
  }

  /** Creates or updates the organization's plugin of this name; a plugin already as declared is not written. */
  async upsertPlugin(
    organizationId: string,
    input: PluginInput,
    manager?: EntityManager,
  ): Promise<{ plugin: PluginEntity; action: UpsertAction }> {
    const name = pluginName(input.name);
    const oauth = input.oauth === undefined ? undefined : parseOAuth(input.oauth);
    const existing = await this.repository.findPluginByName(organizationId, name, manager);
    if (!existing) {
      const plugin = Object.assign(new PluginEntity(), {
        id: randomUUID(),
        organizationId,
        name,
        oauth: oauth ?? null,
      });
      return { plugin: await this.repository.savePlugin(plugin, manager), action: 'created' };
    }
    if (oauth === undefined || canonical(oauth) === canonical(existing.oauth)) {
      return { plugin: existing, action: 'unchanged' };
    }
    existing.oauth = oauth;
    return { plugin: await this.repository.savePlugin(existing, manager), action: 'updated' };
  }

  /** Creates or updates the organization's tool of this name, validating its config for its kind. */
  async upsertTool(
    organizationId: string,
    input: ToolInput,
    manager?: EntityManager,
  ): Promise<{ tool: ToolEntity; action: UpsertAction }> {
    if (typeof input.name !== 'string' || !TOOL_NAME.test(input.name)) {
      throw new ToolInputError('name must be 1-64 letters, digits, _ or -');
    }
    if (!TOOL_KINDS.includes(input.kind as ToolKind)) {
      throw new ToolInputError(`kind must be one of ${TOOL_KINDS.join(', ')}`);
    }
    const kind = input.kind as ToolKind;
    let config;
    try {
      config = parseToolConfig(kind, input.config);
    } catch (error) {
      if (error instanceof ToolConfigError) throw new ToolInputError(error.message);
      throw error;
    }
    if (input.description !== undefined && input.description.length > MAX_DESCRIPTION_CHARS) {
      throw new ToolInputError(`description must be at most ${MAX_DESCRIPTION_CHARS} characters`);
    }
    const existing = await this.repository.findByNameWithPlugin(organizationId, input.name, manager);
    let plugin: PluginEntity | null = existing?.plugin ?? null;
    if (input.plugin === null) plugin = null;
    else if (input.plugin !== undefined) {
      plugin = await this.repository.findPluginByName(organizationId, input.plugin.trim(), manager);
      if (!plugin) throw new ToolInputError(`plugin "${input.plugin}" does not exist in this organization`);
    }
    checkAuthMatchesPlugin(kind, config, plugin);
    // What the config may name and reach, for whoever writes it (refused here, before any write).
    const configuredBy = await this.policy.vet(organizationId, toolReferences(kind, config), manager);

    const tool =
      existing ?? Object.assign(new ToolEntity(), { id: randomUUID(), organizationId, name: input.name });
    const before = existing ? canonical(declared(existing)) : undefined;
    tool.kind = kind;
    tool.config = config;
    tool.description = input.description ?? existing?.description ?? '';
    tool.pluginId = plugin?.id ?? null;
    tool.plugin = plugin;
    // A config declared again as it is changes nothing, whoever declares it.
    if (before !== undefined && canonical(declared(tool)) === before) return { tool, action: 'unchanged' };
    tool.configuredBy = configuredBy;
    if (!existing) {
      assertUnderQuota(
        await this.repository.countForOrganization(organizationId, manager),
        this.config.quotas.toolsPerOrganization,
        'tools',
        'QUOTA_TOOLS_PER_ORGANIZATION',
      );
    }
    const saved = await this.repository.save(tool, manager);
    saved.plugin = plugin;
    return { tool: saved, action: existing ? 'updated' : 'created' };
  }

  /** `apply --prune`: deletes the organization's tools not named in `keep`. */
  pruneToolsExcept(
    organizationId: string,
    keep: readonly string[],
    manager: EntityManager,
  ): Promise<DeletedRow[]> {
    return this.repository.deleteExcept(organizationId, keep, manager);
  }

  /** `apply --prune`: deletes the organization's plugins not named in `keep`. */
  prunePluginsExcept(
    organizationId: string,
    keep: readonly string[],
    manager: EntityManager,
  ): Promise<DeletedRow[]> {
    return this.repository.deletePluginsExcept(organizationId, keep, manager);
  }
}

function pluginName(value: unknown): string {
  const name = typeof value === 'string' ? value.trim() : '';
  if (name.length === 0 || name.length > 100 || /[\r\n\t]/.test(name)) {
    throw new ToolInputError('plugin name must be 1-100 characters on one line');
  }
  return name;
}

function parseOAuth(value: unknown): PluginOAuth | null {
  if (value === null) return null;
  if (!isObject(value)) throw new ToolInputError('oauth must be an object or null');
  const unknown = Object.keys(value).find(
    (key) => !['providerId', 'requiredScopes', 'authUrl'].includes(key),
  );
  if (unknown) throw new ToolInputError(`oauth has unknown field "${unknown}"`);
  if (!isProviderId(value.providerId)) {
    throw new ToolInputError('oauth.providerId must be 1-128 letters, digits, . _ : or -');
  }
  const scopes = value.requiredScopes ?? [];
  if (!Array.isArray(scopes) || !scopes.every((scope) => typeof scope === 'string' && /^\S+$/.test(scope))) {
    throw new ToolInputError('oauth.requiredScopes must be a list of scope strings');
  }
  let authUrl: URL;
  try {
    authUrl = new URL(String(value.authUrl));
  } catch {
    throw new ToolInputError('oauth.authUrl must be an absolute URL where the user signs in');
  }
  if (authUrl.protocol !== 'https:' && authUrl.protocol !== 'http:') {
    throw new ToolInputError('oauth.authUrl must be an http(s) URL');
  }
  return {
    providerId: value.providerId,
    requiredScopes: [...new Set(scopes as string[])],
    authUrl: String(value.authUrl),
  };
}

/** A user-token tool must be in a plugin for that provider, so a missing token can become oauth_required. */
function checkAuthMatchesPlugin(kind: ToolKind, config: unknown, plugin: PluginEntity | null): void {
  const providerId = plugin?.oauth?.providerId;
  if (kind === 'rest') {
    const auth = (config as RestToolConfig).auth;
    if (auth.type === 'user_oauth' && auth.providerId !== providerId) {
      throw new ToolInputError(
        `config.auth user_oauth for "${auth.providerId}" needs the tool to be in a plugin whose oauth.providerId is "${auth.providerId}"`,
      );
    }
  }
  if (kind === 'mcp' && (config as McpServerConfig).forwardUserToken && providerId !== undefined) {
    throw new ToolInputError(
      'config.forwardUserToken cannot be combined with an OAuth plugin: the server would get two different tokens',
    );
  }
}

function declared(tool: ToolEntity) {
  return {
    kind: tool.kind,
    config: tool.config,
    description: tool.description,
    pluginId: tool.pluginId,
  };
}

/** Canonical JSON (sorted keys, no undefined), so JSONB read back compares equal to input. */
function canonical(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, item: unknown) =>
    typeof item === 'object' && item !== null && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}
