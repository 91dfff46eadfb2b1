import { Module } from '@nestjs/common';
import { LlmProvidersService } from './llm-providers.service.js';
import { UpstreamBreakers } from './upstream-breakers.js';

@Module({
  providers: [LlmProvidersService, UpstreamBreakers],
  exports: [LlmProvidersService, UpstreamBreakers],
})
export class LlmModule {}
