import { Module } from '@nestjs/common';
import { AuditLogRepository } from './audit-log.repository.js';
import { AuditLogService } from './audit-log.service.js';

/** The audit trail of administrative changes (table `audit_log`). */
@Module({
  providers: [AuditLogRepository, AuditLogService],
  exports: [AuditLogService],
})
export class AuditLogModule {}
