import { Global, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { InFlightLimiter } from './in-flight-limiter.service.js';
import { RateLimitInterceptor } from './rate-limit.interceptor.js';
import { RateLimitService } from './rate-limit.service.js';
import { RateLimitsRepository } from './rate-limits.repository.js';

@Global()
@Module({
  providers: [
    RateLimitsRepository,
    RateLimitService,
    InFlightLimiter,
    { provide: APP_INTERCEPTOR, useClass: RateLimitInterceptor },
  ],
  exports: [InFlightLimiter],
})
export class LimitsModule {}
