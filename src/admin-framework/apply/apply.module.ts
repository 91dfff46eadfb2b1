import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AuditLogModule } from '../audit/audit-log.module.js';
import { ApplyRepository } from './apply.repository.js';
import { ApplyService } from './apply.service.js';

/**
 * `apply -f`: the service that runs every section in one transaction. Sections live with their
 * features (organizations, assistants, tools, …) and are discovered, so this module imports none.
 */
@Module({
  imports: [DiscoveryModule, AuditLogModule],
  providers: [ApplyRepository, ApplyService],
  exports: [ApplyService],
})
export class ApplyModule {}
