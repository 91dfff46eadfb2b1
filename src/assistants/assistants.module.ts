import { Module } from '@nestjs/common';
import { TenantConfigModule } from '../tenant-config/tenant-config.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { AssistantsApplySection } from './admin/assistants.apply-section.js';
import { AssistantTurnCache } from './assistant-turn-cache.js';
import { AssistantsRepository } from './assistants.repository.js';
import { AssistantsService } from './assistants.service.js';

/** Assistants: storage, the service, and their `apply -f` section (which resolves organizations). */
@Module({
  imports: [OrganizationsModule, TenantConfigModule],
  providers: [AssistantsRepository, AssistantTurnCache, AssistantsService, AssistantsApplySection],
  exports: [AssistantsService],
})
export class AssistantsModule {}
