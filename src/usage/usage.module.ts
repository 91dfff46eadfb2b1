import { Module } from '@nestjs/common';
import { AdminApiModule } from '../admin-api/admin-api.module.js';
import { UsageBudgetsModule } from './usage-budgets.module.js';
import { UsageReportService } from './usage-report.service.js';
import { UsageController } from './usage.controller.js';

/**
 * The reporting side of usage: the admin report endpoint, in the admin graph. The rollup table is
 * written by the turn store inside the turn's one statement; this module only reads it.
 */
@Module({
  imports: [AdminApiModule, UsageBudgetsModule],
  controllers: [UsageController],
  providers: [UsageReportService],
})
export class UsageModule {}
