import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { SharedLoads } from '../common/cache/shared-loads.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import { APP_CONFIG, parseSsrfAllowlist, type AppConfig, type SsrfAllowlist } from '../config/app-config.js';
import type { OrganizationEntity } from '../organizations/entities/organization.entity.js';
import { OrganizationsRepository } from '../organizations/organizations.repository.js';
import { SsrfPolicy, SsrfRefusedError } from '../common/network/ssrf-policy.js';
import { currentAuthor, type ConfigAuthorKind } from './config-author.js';
import type { ConfigReferences } from './config-references.js';
import { isServiceVariable } from '../config/service-environment.js';

type Environment = Readonly<Record<string, string | undefined>>;

/** What a configuration of one organization may use when it runs. */
export interface ConfigAccess {
  /** The environment it may read: the granted variables (organization-written) or all but the service's own. */
  secrets: Environment;
  /** Whom it may reach: the organization's allowlist (plus SSRF_ALLOWLIST when the platform wrote it). */
  policy: SsrfPolicy;
  /** Identifies `policy`, for connection pools kept per policy (GuardedFetchPool, the model's clients). */
  policyKey: string;
  /** Written by the platform: trusted with the deployment's own reach (and trace context). */
  platform: boolean;
}

const ORGANIZATION_CACHE_TTL_MS = 5_000;
const MAX_POLICIES = 256;

/**
 * The one enforcement point between what an organization's admin configures and the service's
 * secrets and network. At write time (`vet`, called by the assistants, specialists and tools
 * services on every path: admin API, `apply`, CLI) an organization caller may name only the
 * environment variables the platform granted its organization (`secretEnvGrants`), and only
 * hosts that are public or in its organization's `ssrfAllowlist`; nobody may name the service's
 * own variables. At call time (`access`) a configuration reads only what its author may: a
 * grant withdrawn later makes the secret unreadable, and the call fails without sending it.
 */
@Injectable()
export class TenantConfigPolicy {
  private readonly organizations = new Map<string, { row: OrganizationEntity | null; expiresAt: number }>();
  private readonly organizationLoads = new SharedLoads<OrganizationEntity | null>();
  private readonly policies = new Map<string, SsrfPolicy>();
  private readonly platformSecrets: Environment;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repository: OrganizationsRepository,
  ) {
    const env = config.tools.secretEnvironment;
    this.platformSecrets = Object.fromEntries(
      Object.entries(env).filter(([name]) => !isServiceVariable(name)),
    );
  }

  /**
   * Checks what the author of the write in progress (see `writingAs`) may reference in
   * `organizationId`, and says who wrote it (stored with the configuration). Throws ApiError:
   * 403 `insufficient_scope` for a variable not granted (or the service's own), 400
   * `invalid_request` for a host the organization may not reach; the message names the field.
   */
  async vet(
    organizationId: string,
    references: ConfigReferences,
    manager?: EntityManager,
  ): Promise<ConfigAuthorKind> {
    const author = currentAuthor();
    for (const { field, name } of references.env) {
      if (isServiceVariable(name)) {
        throw new ApiError(
          author.kind === 'platform' ? 'invalid_request' : 'insufficient_scope',
          `${field}: "${name}" is one of the service's own variables, which no configuration may reference`,
        );
      }
    }
    if (author.kind === 'platform') return 'platform';
    if (author.organizationId !== organizationId) {
      throw new ApiError(
        'insufficient_scope',
        "An organization's admin configures its own organization only",
      );
    }
    const organization = await this.repository.findById(organizationId, manager);
    if (!organization) throw new ApiError('not_found', 'No such organization');
    const granted = new Set(organization.secretEnvGrants);
    for (const { field, name } of references.env) {
      if (!granted.has(name)) {
        throw new ApiError(
          'insufficient_scope',
          `${field}: the environment variable "${name}" is not granted to this organization; the platform grants secrets with secretEnvGrants`,
        );
      }
    }
    const { policy } = this.policyFor(organization, false);
    for (const { field, url } of references.urls) await refuseUnreachable(policy, field, url);
    return 'organization';
  }

  /** What a configuration of `organizationId` written by `author` may use when it runs. */
  async access(organizationId: string, author: ConfigAuthorKind): Promise<ConfigAccess> {
    const organization = await this.organization(organizationId);
    const platform = author === 'platform';
    const { policy, key } = this.policyFor(organization, platform);
    let secrets: Environment = {};
    if (platform) secrets = this.platformSecrets;
    else if (organization) {
      const env = this.config.tools.secretEnvironment;
      secrets = Object.fromEntries(
        organization.secretEnvGrants
          .filter((name) => !isServiceVariable(name))
          .map((name) => [name, env[name]]),
      );
    }
    return { secrets, policy, policyKey: key, platform };
  }

  private async organization(id: string): Promise<OrganizationEntity | null> {
    const now = Date.now();
    const cached = this.organizations.get(id);
    if (cached && cached.expiresAt > now) return cached.row;
    return this.organizationLoads.run(
      id,
      () => this.repository.findById(id),
      (row) => {
        if (this.organizations.size > 10_000) this.organizations.clear();
        this.organizations.set(id, { row, expiresAt: now + ORGANIZATION_CACHE_TTL_MS });
      },
    );
  }

  /** The organization's allowlist, with the deployment's when the platform wrote the configuration. */
  private policyFor(organization: OrganizationEntity | null, platform: boolean) {
    const own = organization?.ssrfAllowlist ?? [];
    const key = JSON.stringify([platform, own]);
    let policy = this.policies.get(key);
    if (!policy) {
      policy = new SsrfPolicy(
        merge(parseSsrfAllowlist(own), platform ? this.config.tools.ssrfAllowlist : undefined),
      );
      if (this.policies.size >= MAX_POLICIES) this.policies.clear();
      this.policies.set(key, policy);
    }
    return { policy, key };
  }
}

function merge(own: SsrfAllowlist, deployment: SsrfAllowlist | undefined): SsrfAllowlist {
  if (!deployment) return own;
  return {
    cidrs: [...own.cidrs, ...deployment.cidrs],
    hosts: [...own.hosts, ...deployment.hosts],
    hostPorts: [...own.hostPorts, ...deployment.hostPorts],
  };
}

/**
 * Refuses a URL whose host is, or resolves to, an address `policy` does not allow. A name that
 * does not resolve now is accepted: every connection is checked again when it is made.
 */
async function refuseUnreachable(policy: SsrfPolicy, field: string, url: string): Promise<void> {
  const parsed = new URL(url);
  const host = parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname;
  const port = Number(parsed.port) || (parsed.protocol === 'https:' ? 443 : 80);
  let addresses: string[];
  if (isIP(host) !== 0) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map(({ address }) => address);
    } catch {
      return;
    }
  }
  try {
    for (const address of addresses) policy.check(host, port, address);
  } catch (error) {
    if (!(error instanceof SsrfRefusedError)) throw error;
    throw new ApiError(
      'invalid_request',
      `${field}: ${error.message.replace('tools may not reach', "this organization's configuration may not reach")}; the platform allows such hosts per organization with ssrfAllowlist`,
    );
  }
}
