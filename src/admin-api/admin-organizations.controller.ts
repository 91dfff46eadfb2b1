import { Body, Controller, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiError } from '../common/errors/error-catalogue.js';
import { AdminAccess } from './admin-access.decorator.js';
import { Caller, type AdminCaller } from './admin-caller.js';
import { AdminOrganizationsService } from './admin-organizations.service.js';
import { AuditLogQueryDto, CreateApiKeyDto, PutOrganizationDto } from './dto/admin-bodies.dto.js';

/** The admin API's prefix; other modules adding admin routes (usage) use it too. */
export const ADMIN_PREFIX = 'admin/v1';

@Controller(ADMIN_PREFIX)
@AdminAccess()
export class AdminOrganizationsController {
  constructor(private readonly service: AdminOrganizationsService) {}

  @Get('organizations')
  async list(@Caller() caller: AdminCaller) {
    return { object: 'list', data: await this.service.list(caller) };
  }

  @Get('organizations/:org')
  get(@Caller() caller: AdminCaller, @Param('org') org: string) {
    return this.service.get(caller, org);
  }

  @Put('organizations/:org')
  put(@Caller() caller: AdminCaller, @Param('org') org: string, @Body() body: PutOrganizationDto) {
    return this.service.put(caller, org, body);
  }

  @Get('organizations/:org/keys')
  async listKeys(@Caller() caller: AdminCaller, @Param('org') org: string) {
    return { object: 'list', data: await this.service.listKeys(caller, org) };
  }

  @Post('organizations/:org/keys')
  createKey(@Caller() caller: AdminCaller, @Param('org') org: string, @Body() body: CreateApiKeyDto) {
    return this.service.createKey(caller, org, body);
  }

  @Post('organizations/:org/keys/:keyId/revoke')
  @HttpCode(200)
  revokeKey(@Caller() caller: AdminCaller, @Param('org') org: string, @Param('keyId') keyId: string) {
    return this.service.revokeKey(caller, org, keyId);
  }

  /** The body is the document `apply -f` reads, as JSON; `dry_run=true` rolls back. */
  @Post('apply')
  @HttpCode(200)
  apply(@Caller() caller: AdminCaller, @Body() document: unknown, @Query('dry_run') dryRun?: string) {
    if (dryRun !== undefined && dryRun !== 'true' && dryRun !== 'false') {
      throw new ApiError('invalid_request', 'dry_run must be true or false');
    }
    return this.service.apply(caller, document, dryRun === 'true');
  }

  @Get('audit-log')
  auditLog(@Caller() caller: AdminCaller, @Query() query: AuditLogQueryDto) {
    return this.service.auditLog(caller, query);
  }
}
