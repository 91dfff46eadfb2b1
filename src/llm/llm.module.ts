import { Module } from '@nestjs/common';
import { LlmProvidersService } from './llm-providers.service.js';
import { UpstreamBreakers } from './upstream-breakers.js';
import { UpstreamLoad } from './upstream-load.js';
import { UpstreamRedis } from './upstream-redis.js';

@Module({
  providers: [LlmProvidersService, UpstreamBreakers, UpstreamRedis, UpstreamLoad],
  exports: [LlmProvidersService, UpstreamBreakers],
})
export class LlmModule {}
