import { Inject, Injectable } from '@nestjs/common';
import type { ModelSettings } from './model-settings.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { LlmProvider } from './llm.types.js';
import { OfflineModelProvider } from './offline-model.provider.js';
import { OpenAiCompatibleProvider } from './openai-compatible.provider.js';

/** Picks the provider that serves a model setting; providers keep their own connection pools. */
@Injectable()
export class LlmProvidersService {
  private readonly providers: Record<ModelSettings['provider'], LlmProvider>;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.providers = {
      'openai-compatible': new OpenAiCompatibleProvider({
        headersTimeoutMs: config.upstream.headersTimeoutMs,
        firstTokenTimeoutMs: config.upstream.firstTokenTimeoutMs,
        stallTimeoutMs: config.upstream.stallTimeoutMs,
        maxRetries: config.upstream.maxRetries,
        retryBudgetMs: config.upstream.retryBudgetMs,
      }),
      offline: new OfflineModelProvider(),
    };
  }

  for(settings: ModelSettings): LlmProvider {
    return this.providers[settings.provider];
  }
}
