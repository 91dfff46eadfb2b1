import { Inject, Injectable } from '@nestjs/common';
import type { AuditChange } from '../admin-framework/audit/audit-log.service.js';
import { assistantView } from '../assistants/admin/assistants.commands.js';
import { AssistantsService } from '../assistants/assistants.service.js';
import type { AssistantEntity } from '../assistants/entities/assistant.entity.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { gatewayView } from '../mcp-gateway/gateways.commands.js';
import { McpGatewaysService } from '../mcp-gateway/mcp-gateways.service.js';
import { specialistView } from '../specialists/admin/specialists.commands.js';
import { SpecialistsService } from '../specialists/specialists.service.js';
import { toolView } from '../tools/admin/tools.commands.js';
import { ToolsService } from '../tools/tools.service.js';
import type { AdminCaller } from './admin-caller.js';
import { AdminScope, clientErrors } from './admin-scope.service.js';
import type { PutAssistantDto, PutGatewayDto, PutSpecialistDto, PutToolDto } from './dto/admin-bodies.dto.js';

type Action = 'created' | 'updated' | 'unchanged';

/** The answer and the audit row of an upsert (no audit row when nothing changed). */
function upserted<View extends object>(
  organizationId: string,
  resourceType: string,
  action: Action,
  resourceId: string,
  before: View | undefined,
  after: View,
): { value: View & { action: Action }; changes: AuditChange[] } {
  return {
    value: { ...after, action },
    changes:
      action === 'unchanged' ? [] : [{ organizationId, action, resourceType, resourceId, before, after }],
  };
}

/** The answer and the audit row of a delete. */
function deleted(organizationId: string, resourceType: string, id: string, name: string, before: unknown) {
  return {
    value: { id, name, object: resourceType, deleted: true as const },
    changes: [
      { organizationId, action: 'deleted' as const, resourceType, resourceId: id, before, after: null },
    ],
  };
}

/**
 * Assistants, specialists, tools and gateways of one organization. Writes are upserts by name,
 * as `apply` does them, through the same services, each with its audit row in its transaction.
 */
@Injectable()
export class AdminAgentsService {
  constructor(
    private readonly scope: AdminScope,
    private readonly assistants: AssistantsService,
    private readonly specialists: SpecialistsService,
    private readonly tools: ToolsService,
    private readonly gateways: McpGatewaysService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async listAssistants(caller: AdminCaller, ref: string) {
    const organization = await this.scope.organization(caller, ref);
    return (await this.assistants.list(organization.id)).map(assistantView);
  }

  async getAssistant(caller: AdminCaller, ref: string, assistantRef: string) {
    return assistantView(await this.assistant(caller, ref, assistantRef));
  }

  async putAssistant(caller: AdminCaller, ref: string, name: string, body: PutAssistantDto) {
    const organization = await this.scope.organization(caller, ref);
    return this.scope.write(caller, async (manager) => {
      const existing = await this.assistants.findUniqueByName(organization.id, name, manager);
      const before = existing ? assistantView(existing) : undefined;
      const { assistant, action } = await this.assistants.upsertByName(
        organization.id,
        { name, instructions: body.instructions, model: body.model, tools: body.tools },
        manager,
      );
      return upserted(organization.id, 'assistant', action, assistant.id, before, assistantView(assistant));
    });
  }

  async listSpecialists(caller: AdminCaller, ref: string, assistantRef: string) {
    const assistant = await this.assistant(caller, ref, assistantRef);
    return (await this.specialists.list(assistant.organizationId, assistant.id)).map(specialistView);
  }

  async putSpecialist(
    caller: AdminCaller,
    ref: string,
    assistantRef: string,
    name: string,
    body: PutSpecialistDto,
  ) {
    const assistant = await this.assistant(caller, ref, assistantRef);
    const { organizationId } = assistant;
    return this.scope.write(caller, async (manager) => {
      const existing = await this.specialists.find(organizationId, assistant.id, name, manager);
      const before = existing ? specialistView(existing) : undefined;
      const { specialist, action } = await this.specialists.upsert(
        organizationId,
        assistant.id,
        { name, role: body.role, instructions: body.instructions, model: body.model, tools: body.tools },
        manager,
      );
      return upserted(
        organizationId,
        'specialist',
        action,
        specialist.id,
        before,
        specialistView(specialist),
      );
    });
  }

  async listTools(caller: AdminCaller, ref: string) {
    const organization = await this.scope.organization(caller, ref);
    return (await this.tools.list(organization.id)).map(toolView);
  }

  async putTool(caller: AdminCaller, ref: string, name: string, body: PutToolDto) {
    const organization = await this.scope.organization(caller, ref);
    return this.scope.write(caller, async (manager) => {
      const existing = await this.tools.find(organization.id, name, manager);
      const before = existing ? toolView(existing) : undefined;
      const { tool, action } = await this.tools.upsertTool(
        organization.id,
        { name, kind: body.kind, config: body.config, description: body.description, plugin: body.plugin },
        manager,
      );
      return upserted(organization.id, 'tool', action, tool.id, before, toolView(tool));
    });
  }

  async listGateways(caller: AdminCaller, ref: string) {
    const organization = await this.scope.organization(caller, ref);
    return (await this.gateways.list(organization.id)).map((gateway) => gatewayView(gateway, this.config));
  }

  async putGateway(caller: AdminCaller, ref: string, name: string, body: PutGatewayDto) {
    const organization = await this.scope.organization(caller, ref);
    // Read before the transaction: this lookup cannot join one (a gateway is written rarely).
    const existing = await this.gateways.find(organization.id, name);
    const before = existing ? gatewayView(existing, this.config) : undefined;
    return this.scope.write(caller, async (manager) => {
      const { gateway, action } = await this.gateways.upsertByName(
        organization.id,
        { name, toolNames: body.tools },
        manager,
      );
      return upserted(
        organization.id,
        'gateway',
        action,
        gateway.id,
        before,
        gatewayView(gateway, this.config),
      );
    });
  }

  /**
   * Deletes: the row and its `deleted` audit row (before: the resource, after: null) in one
   * transaction. Something that does not exist (or is another organization's) is 404 and writes
   * nothing. Assistants, specialists and gateways name their tools by name, so nothing else
   * changes: a tool name that no longer resolves is skipped (ToolCatalogService.resolveLoaded).
   */
  async deleteSpecialist(caller: AdminCaller, ref: string, assistantRef: string, name: string) {
    const assistant = await this.assistant(caller, ref, assistantRef);
    const { organizationId } = assistant;
    return this.scope.write(caller, async (manager) => {
      const existing = await this.specialists.find(organizationId, assistant.id, name, manager);
      if (!existing) throw new ApiError('not_found', `No specialist "${name}" in this assistant`);
      await this.specialists.remove(organizationId, assistant.id, name, manager);
      return deleted(organizationId, 'specialist', existing.id, name, specialistView(existing));
    });
  }

  async deleteTool(caller: AdminCaller, ref: string, name: string) {
    const organization = await this.scope.organization(caller, ref);
    return this.scope.write(caller, async (manager) => {
      const existing = await this.tools.find(organization.id, name, manager);
      if (!existing) throw new ApiError('not_found', `No tool "${name}" in this organization`);
      await this.tools.delete(organization.id, name, manager);
      return deleted(organization.id, 'tool', existing.id, name, toolView(existing));
    });
  }

  async deleteGateway(caller: AdminCaller, ref: string, name: string) {
    const organization = await this.scope.organization(caller, ref);
    // Read before the transaction, as for the upsert: this lookup cannot join one.
    const existing = await this.gateways.find(organization.id, name);
    if (!existing) throw new ApiError('not_found', `No gateway "${name}" in this organization`);
    const before = gatewayView(existing, this.config);
    return this.scope.write(caller, async (manager) => {
      if (!(await this.gateways.delete(organization.id, name, manager))) {
        throw new ApiError('not_found', `No gateway "${name}" in this organization`);
      }
      return deleted(organization.id, 'gateway', existing.id, name, before);
    });
  }

  /** The organization's assistant by id or name; another organization's is the same 404. */
  private async assistant(caller: AdminCaller, ref: string, assistantRef: string): Promise<AssistantEntity> {
    const organization = await this.scope.organization(caller, ref);
    const assistant = await clientErrors(() =>
      this.assistants.findByReference(organization.id, assistantRef),
    );
    if (!assistant)
      throw new ApiError('assistant_not_found', `No assistant "${assistantRef}" in this organization`);
    return assistant;
  }
}
