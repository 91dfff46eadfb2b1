import { Body, Controller, Delete, Get, Param, Put } from '@nestjs/common';
import { ADMIN_PREFIX, AdminAccess } from './admin-access.decorator.js';
import { AdminAgentsService } from './admin-agents.service.js';
import { AdminUpstreamHealthService } from './admin-upstream-health.service.js';
import { Caller, type AdminCaller } from './admin-caller.js';
import { PutAssistantDto, PutGatewayDto, PutSpecialistDto, PutToolDto } from './dto/admin-bodies.dto.js';

const ORG = `${ADMIN_PREFIX}/organizations/:org`;

@Controller(ORG)
@AdminAccess()
export class AdminAgentsController {
  constructor(
    private readonly service: AdminAgentsService,
    private readonly upstreamHealth: AdminUpstreamHealthService,
  ) {}

  /** Every upstream target of the organization's assistants and specialists, with its circuit breaker. */
  @Get('upstream-targets')
  async listUpstreamTargets(@Caller() caller: AdminCaller, @Param('org') org: string) {
    return { object: 'list', data: await this.upstreamHealth.list(caller, org) };
  }

  /** The upstream targets a stored turn's model calls tried (docs/resilience.md). */
  @Get('responses/:response/upstream-attempts')
  responseAttempts(
    @Caller() caller: AdminCaller,
    @Param('org') org: string,
    @Param('response') response: string,
  ) {
    return this.upstreamHealth.responseAttempts(caller, org, response);
  }

  @Get('assistants')
  async listAssistants(@Caller() caller: AdminCaller, @Param('org') org: string) {
    return { object: 'list', data: await this.service.listAssistants(caller, org) };
  }

  @Get('assistants/:assistant')
  getAssistant(
    @Caller() caller: AdminCaller,
    @Param('org') org: string,
    @Param('assistant') assistant: string,
  ) {
    return this.service.getAssistant(caller, org, assistant);
  }

  /** Creates or updates the organization's assistant of this name. */
  @Put('assistants/:assistant')
  putAssistant(
    @Caller() caller: AdminCaller,
    @Param('org') org: string,
    @Param('assistant') name: string,
    @Body() body: PutAssistantDto,
  ) {
    return this.service.putAssistant(caller, org, name, body);
  }

  @Get('assistants/:assistant/specialists')
  async listSpecialists(
    @Caller() caller: AdminCaller,
    @Param('org') org: string,
    @Param('assistant') assistant: string,
  ) {
    return { object: 'list', data: await this.service.listSpecialists(caller, org, assistant) };
  }

  @Put('assistants/:assistant/specialists/:name')
  putSpecialist(
    @Caller() caller: AdminCaller,
    @Param('org') org: string,
    @Param('assistant') assistant: string,
    @Param('name') name: string,
    @Body() body: PutSpecialistDto,
  ) {
    return this.service.putSpecialist(caller, org, assistant, name, body);
  }

  @Delete('assistants/:assistant/specialists/:name')
  deleteSpecialist(
    @Caller() caller: AdminCaller,
    @Param('org') org: string,
    @Param('assistant') assistant: string,
    @Param('name') name: string,
  ) {
    return this.service.deleteSpecialist(caller, org, assistant, name);
  }

  @Get('tools')
  async listTools(@Caller() caller: AdminCaller, @Param('org') org: string) {
    return { object: 'list', data: await this.service.listTools(caller, org) };
  }

  @Put('tools/:name')
  putTool(
    @Caller() caller: AdminCaller,
    @Param('org') org: string,
    @Param('name') name: string,
    @Body() body: PutToolDto,
  ) {
    return this.service.putTool(caller, org, name, body);
  }

  @Delete('tools/:name')
  deleteTool(@Caller() caller: AdminCaller, @Param('org') org: string, @Param('name') name: string) {
    return this.service.deleteTool(caller, org, name);
  }

  @Get('gateways')
  async listGateways(@Caller() caller: AdminCaller, @Param('org') org: string) {
    return { object: 'list', data: await this.service.listGateways(caller, org) };
  }

  @Put('gateways/:name')
  putGateway(
    @Caller() caller: AdminCaller,
    @Param('org') org: string,
    @Param('name') name: string,
    @Body() body: PutGatewayDto,
  ) {
    return this.service.putGateway(caller, org, name, body);
  }

  @Delete('gateways/:name')
  deleteGateway(@Caller() caller: AdminCaller, @Param('org') org: string, @Param('name') name: string) {
    return this.service.deleteGateway(caller, org, name);
  }
}
