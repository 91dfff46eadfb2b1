import { Global, Module } from '@nestjs/common';
import { InFlightLimiter } from './in-flight-limiter.service.js';
import { RateLimitGuard } from './rate-limit.guard.js';
import { RateLimitService } from './rate-limit.service.js';
import { RateLimitsRepository } from './rate-limits.repository.js';

/** The in-flight cap and the per-organization rate limit (its guard is ordered by AppModule). */
@Global()
@Module({
  providers: [RateLimitsRepository, RateLimitService, InFlightLimiter, RateLimitGuard],
  exports: [InFlightLimiter, RateLimitGuard, RateLimitService],
})
export class LimitsModule {}
