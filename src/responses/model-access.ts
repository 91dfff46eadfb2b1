import { Inject, Injectable } from '@nestjs/common';
import type { buildConnector } from 'undici';
import { ApiError } from '../common/errors/error-catalogue.js';
import type { SsrfPolicy } from '../common/network/ssrf-policy.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { UpstreamAccess } from '../llm/llm.types.js';
import type { AgentProfile } from '../specialists/agent-roster.service.js';
import { TenantConfigPolicy } from '../tenant-config/tenant-config.policy.js';
import { guardedConnector } from '../tools/ssrf/guarded-fetch.js';

/**
 * What an agent's model call may send and reach, from its organization and the author of its
 * model settings (TenantConfigPolicy). A variable its author may not read (a grant withdrawn,
 * or the service's own) refuses the call before anything is sent; an organization-written base
 * URL goes through the SSRF guard, connection by connection.
 */
@Injectable()
export class ModelAccess {
  /**
   * One guarded connector per policy, built on a turn's first need of it rather than on every turn.
   * Sharing is safe: TenantConfigPolicy keys a policy by its allowlist and the platform's flag, so
   * organizations share a connector only when it decides every address alike for them.
   */
  private readonly connectors = new WeakMap<SsrfPolicy, buildConnector.connector>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly policy: TenantConfigPolicy,
  ) {}

  async for(
    organizationId: string,
    agent: Pick<AgentProfile, 'model' | 'modelConfiguredBy'>,
  ): Promise<UpstreamAccess | undefined> {
    const settings = agent.model;
    if (settings.provider !== 'openai-compatible') return undefined;
    const access = await this.policy.access(organizationId, agent.modelConfiguredBy);
    // Every target's key, checked alike: one unreadable name refuses the call before anything is sent.
    const names = [settings.apiKeyEnv, ...(settings.fallbacks ?? []).map((target) => target.apiKeyEnv)];
    const apiKeys: Record<string, string | undefined> = {};
    for (const name of names) {
      if (name === undefined) continue;
      // Unset everywhere is the operator's "no key" (sent as before); set but not readable is refused.
      if (!(name in access.secrets) && this.config.upstream.keyEnvironment[name] !== undefined) {
        throw new ApiError(
          'upstream_unavailable',
          "This assistant's model is misconfigured: it names a secret its organization may not use",
        );
      }
      apiKeys[name] = access.secrets[name];
    }
    return {
      apiKey: settings.apiKeyEnv === undefined ? undefined : apiKeys[settings.apiKeyEnv],
      apiKeys,
      scope: organizationId,
      connect: access.platform ? undefined : this.connector(access.policy),
      poolKey: access.platform ? 'platform' : access.policyKey,
      traceContext: access.platform,
    };
  }

  private connector(policy: SsrfPolicy): buildConnector.connector {
    let connect = this.connectors.get(policy);
    if (connect === undefined) {
      connect = guardedConnector(policy);
      this.connectors.set(policy, connect);
    }
    return connect;
  }
}
