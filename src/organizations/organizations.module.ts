import { Module } from '@nestjs/common';
import { OrganizationsApplySection } from './admin/organizations.apply-section.js';
import { OrganizationsRepository } from './organizations.repository.js';
import { OrganizationsService } from './organizations.service.js';

/** Organizations: storage, the service every feature resolves them with, and their `apply -f` section. */
@Module({
  providers: [OrganizationsRepository, OrganizationsService, OrganizationsApplySection],
  exports: [OrganizationsService, OrganizationsRepository],
})
export class OrganizationsModule {}
