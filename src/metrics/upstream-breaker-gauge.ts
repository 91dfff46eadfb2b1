import { Injectable } from '@nestjs/common';
import { LlmProvidersService } from '../llm/llm-providers.service.js';
import { UpstreamBreakers } from '../llm/upstream-breakers.js';
import { Metrics } from './metrics.service.js';

/**
 * Feeds `switchboard_upstream_breaker_state` from the breakers, and
 * `switchboard_upstream_clients_closed_total` from the providers (the LLM layer knows no metrics).
 */
@Injectable()
export class UpstreamBreakerGauge {
  constructor(breakers: UpstreamBreakers, providers: LlmProvidersService, metrics: Metrics) {
    breakers.observe((scope, target, state) => metrics.upstreamBreaker(scope, target, state));
    providers.observeClientClosed(() => metrics.upstreamClientClosed());
  }
}
