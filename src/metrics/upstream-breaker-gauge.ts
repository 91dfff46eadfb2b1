import { Injectable } from '@nestjs/common';
import { UpstreamBreakers } from '../llm/upstream-breakers.js';
import { Metrics } from './metrics.service.js';

/** Feeds `switchboard_upstream_breaker_state` from the breakers (the LLM layer knows no metrics). */
@Injectable()
export class UpstreamBreakerGauge {
  constructor(breakers: UpstreamBreakers, metrics: Metrics) {
    breakers.observe((scope, target, state) => metrics.upstreamBreaker(scope, target, state));
  }
}
