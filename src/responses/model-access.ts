import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors/error-catalogue.js';
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
    const name = settings.apiKeyEnv;
    const readable = name === undefined || name in access.secrets;
    // Unset everywhere is the operator's "no key" (sent as before); set but not readable is refused.
    if (!readable && this.config.upstream.keyEnvironment[name] !== undefined) {
      throw new ApiError(
        'upstream_unavailable',
        "This assistant's model is misconfigured: it names a secret its organization may not use",
      );
    }
    return {
      apiKey: name === undefined ? undefined : access.secrets[name],
      connect: access.platform ? undefined : guardedConnector(access.policy),
      poolKey: access.platform ? 'platform' : access.policyKey,
      traceContext: access.platform,
    };
  }
}
