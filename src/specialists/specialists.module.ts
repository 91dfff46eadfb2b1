import { Module } from '@nestjs/common';
import { TenantConfigModule } from '../tenant-config/tenant-config.module.js';
import { AssistantsModule } from '../assistants/assistants.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { SpecialistsApplySection } from './admin/specialists.apply-section.js';
import { AgentRosterService } from './agent-roster.service.js';
import { SpecialistsRepository } from './specialists.repository.js';
import { SpecialistsService } from './specialists.service.js';

/** Specialist agents: storage, the roster turns read, and the `apply -f` section that declares them. */
@Module({
  imports: [OrganizationsModule, TenantConfigModule, AssistantsModule],
  providers: [SpecialistsRepository, SpecialistsService, AgentRosterService, SpecialistsApplySection],
  exports: [SpecialistsService, AgentRosterService],
})
export class SpecialistsModule {}
