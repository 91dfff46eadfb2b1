import { Module } from '@nestjs/common';
import { TenantConfigModule } from '../tenant-config/tenant-config.module.js';
import { LlmProvidersService } from './llm-providers.service.js';

@Module({
  imports: [TenantConfigModule],
  providers: [LlmProvidersService],
  exports: [LlmProvidersService],
})
export class LlmModule {}
