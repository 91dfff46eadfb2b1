import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors/error-catalogue.js';
import { guardedConnector } from '../tools/ssrf/guarded-fetch.js';
import type { ConfigAuthorKind } from '../tenant-config/config-author.js';
import { TenantConfigPolicy } from '../tenant-config/tenant-config.policy.js';
import type { ModelSettings } from './model-settings.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { LlmProvider, UpstreamAccess } from './llm.types.js';
import { OfflineModelProvider } from './offline-model.provider.js';
import { OpenAiCompatibleProvider } from './openai-compatible.provider.js';

/** Picks the provider that serves a model setting; providers keep their own connection pools. */
@Injectable()
export class LlmProvidersService {
  private readonly providers: Record<ModelSettings['provider'], LlmProvider>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly policy: TenantConfigPolicy,
  ) {
    this.providers = {
      'openai-compatible': new OpenAiCompatibleProvider({
        timeoutMs: config.upstream.timeoutMs,
        maxRetries: config.upstream.maxRetries,
      }),
      offline: new OfflineModelProvider(),
    };
  }

  for(settings: ModelSettings): LlmProvider {
    return this.providers[settings.provider];
  }

  /**
   * What a model call of `organizationId` may send and reach, given who wrote its settings. A
   * variable its author may not read (a grant withdrawn, or the service's own) refuses the call:
   * nothing is sent. An organization's base URL goes through the SSRF guard.
   */
  async access(
    organizationId: string,
    agent: { model: ModelSettings; modelConfiguredBy: ConfigAuthorKind },
  ): Promise<UpstreamAccess | undefined> {
    const settings = agent.model;
    if (settings.provider !== 'openai-compatible') return undefined;
    const access = await this.policy.access(organizationId, agent.modelConfiguredBy);
    const name = settings.apiKeyEnv;
    if (name !== undefined && !(name in access.secrets) && this.config.upstream.keyEnvironment[name] !== undefined) {
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
