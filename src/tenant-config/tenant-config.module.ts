import { Module } from '@nestjs/common';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { TenantConfigPolicy } from './tenant-config.policy.js';

/** What an organization's configuration may reference and reach (docs/admin-api.md, "Secrets and hosts"). */
@Module({
  imports: [OrganizationsModule],
  providers: [TenantConfigPolicy],
  exports: [TenantConfigPolicy],
})
export class TenantConfigModule {}
