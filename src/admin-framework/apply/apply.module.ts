import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AssistantsModule } from '../../assistants/assistants.module.js';
import { OrganizationsModule } from '../../organizations/organizations.module.js';
import { ApplyRepository } from './apply.repository.js';
import { ApplyService } from './apply.service.js';
import { AssistantsApplySection } from './sections/assistants.apply-section.js';
import { OrganizationsApplySection } from './sections/organizations.apply-section.js';

/** `apply -f`: the service, and the sections of the foundation's own resources. */
@Module({
  imports: [DiscoveryModule, OrganizationsModule, AssistantsModule],
  providers: [ApplyRepository, ApplyService, OrganizationsApplySection, AssistantsApplySection],
  exports: [ApplyService],
})
export class ApplyModule {}
