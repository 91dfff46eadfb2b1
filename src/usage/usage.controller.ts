import { Controller, Get, Query } from '@nestjs/common';
import type { ApiKeyPrincipal } from '../api-keys/api-keys.service.js';
import { Principal, RequireScopes } from '../auth/auth.decorators.js';
import { parseUsageQuery } from './dto/usage-query.dto.js';
import { UsageReportService, type UsageLine } from './usage-report.service.js';

/**
 * Token usage and cost of the caller's organization, under the admin API's prefix. Until the admin
 * API's caller guard lands, only `full_access` keys may read it, and only their own organization.
 */
@Controller('admin/v1/usage')
@RequireScopes()
export class UsageController {
  constructor(private readonly reports: UsageReportService) {}

  @Get()
  async usage(
    @Principal() principal: ApiKeyPrincipal,
    @Query() query: Record<string, unknown>,
  ): Promise<{ object: 'list'; data: UsageLine[] }> {
    const data = await this.reports.report(principal.organizationId, parseUsageQuery(query));
    return { object: 'list', data };
  }
}
