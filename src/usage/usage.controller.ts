import { Controller, Get, Param, Query } from '@nestjs/common';
import { ADMIN_PREFIX, AdminAccess } from '../admin-api/admin-access.decorator.js';
import { Caller, type AdminCaller } from '../admin-api/admin-caller.js';
import { AdminScope } from '../admin-api/admin-scope.service.js';
import { toUsageQuery, UsageQueryDto } from './dto/usage-query.dto.js';
import type { UsageList } from './usage-line.js';
import { UsageReportService } from './usage-report.service.js';

/**
 * Token usage and cost under the admin API's prefix: an organization's `admin` key sees its own
 * organization, a platform administrator every organization (or one, by path).
 */
@Controller(ADMIN_PREFIX)
@AdminAccess()
export class UsageController {
  constructor(
    private readonly reports: UsageReportService,
    private readonly scope: AdminScope,
  ) {}

  /** Everything the caller may see: its organization, or all of them for a platform administrator. */
  @Get('usage')
  async usage(@Caller() caller: AdminCaller, @Query() query: UsageQueryDto): Promise<UsageList> {
    const parsed = toUsageQuery(query);
    const organizationId = caller.kind === 'organization' ? caller.organizationId : null;
    return this.reports.list(organizationId, parsed);
  }

  @Get('organizations/:org/usage')
  async organizationUsage(
    @Caller() caller: AdminCaller,
    @Param('org') org: string,
    @Query() query: UsageQueryDto,
  ): Promise<UsageList> {
    const parsed = toUsageQuery(query);
    const organization = await this.scope.organization(caller, org);
    return this.reports.list(organization.id, parsed);
  }
}
