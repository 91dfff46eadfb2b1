import { Module } from '@nestjs/common';
import { LlmProvidersService } from './llm-providers.service.js';

@Module({
  providers: [LlmProvidersService],
  exports: [LlmProvidersService],
})
export class LlmModule {}
