import { Inject, Injectable } from '@nestjs/common';
import type { ModelSettings } from './model-settings.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { LlmProvider } from './llm.types.js';
import { FailoverProvider } from './failover.provider.js';
import { OfflineModelProvider } from './offline-model.provider.js';
import { OpenAiCompatibleProvider } from './openai-compatible.provider.js';
import { UpstreamBreakers } from './upstream-breakers.js';
import { UpstreamLoad } from './upstream-load.js';

/** Picks the provider that serves a model setting; providers keep their own connection pools. */
@Injectable()
export class LlmProvidersService {
  private readonly providers: Record<ModelSettings['provider'], LlmProvider>;
  private readonly openAiCompatible: OpenAiCompatibleProvider;

  constructor(@Inject(APP_CONFIG) config: AppConfig, breakers: UpstreamBreakers, load: UpstreamLoad) {
    const upstream = config.upstream;
    const single = (this.openAiCompatible = new OpenAiCompatibleProvider({
      headersTimeoutMs: upstream.headersTimeoutMs,
      firstTokenTimeoutMs: upstream.firstTokenTimeoutMs,
      stallTimeoutMs: upstream.stallTimeoutMs,
      maxRetries: upstream.maxRetries,
      retryBudgetMs: upstream.retryBudgetMs,
      maxClients: upstream.maxClients,
    }));
    this.providers = {
      // Every upstream model call goes through its targets (one, in the single-`model` form).
      'openai-compatible': new FailoverProvider(
        single,
        breakers,
        {
          maxRetries: upstream.maxRetries,
          retryBudgetMs: upstream.retryBudgetMs,
          failoverBudgetMs: upstream.failoverBudgetMs,
        },
        load,
      ),
      offline: new OfflineModelProvider(),
    };
  }

  /** Told each time an upstream client is closed to keep the bound (OpenAiCompatibleProvider). */
  observeClientClosed(observer: () => void): void {
    this.openAiCompatible.observeClientClosed(observer);
  }

  for(settings: ModelSettings): LlmProvider {
    return this.providers[settings.provider];
  }
}
