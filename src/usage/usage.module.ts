import { Module } from '@nestjs/common';
import { AdminApiModule } from '../admin-api/admin-api.module.js';
import { UsageBudgetService } from './usage-budget.service.js';
import { UsageReportService } from './usage-report.service.js';
import { UsageController } from './usage.controller.js';
import { UsageRepository } from './usage.repository.js';

/**
 * Usage accounting: the report endpoint and the monthly token budgets. The rollup table is written
 * by the turn store inside the turn's one statement; this module only reads it.
 */
@Module({
  imports: [AdminApiModule],
  controllers: [UsageController],
  providers: [UsageRepository, UsageReportService, UsageBudgetService],
  exports: [UsageBudgetService],
})
export class UsageModule {}
