import { Module } from '@nestjs/common';
import { ApplyModule } from '../admin-framework/apply/apply.module.js';
import { AuditLogModule } from '../admin-framework/audit/audit-log.module.js';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import { AssistantsModule } from '../assistants/assistants.module.js';
import { McpGatewaysModule } from '../mcp-gateway/mcp-gateways.module.js';
import { OidcModule } from '../oidc/oidc.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { SpecialistsModule } from '../specialists/specialists.module.js';
import { ToolsModule } from '../tools/tools.module.js';
import { AdminAccessGuard } from './admin-access.guard.js';
import { AdminAgentsController } from './admin-agents.controller.js';
import { AdminAgentsService } from './admin-agents.service.js';
import { AdminOrganizationsController } from './admin-organizations.controller.js';
import { AdminOrganizationsService } from './admin-organizations.service.js';
import { AdminScope } from './admin-scope.service.js';
import { AdminUpstreamHealthService } from './admin-upstream-health.service.js';
import { UpstreamAttemptsRepository } from './upstream-attempts.repository.js';
import { LlmModule } from '../llm/llm.module.js';
import { DeniedAttemptsInterceptor } from './denied-attempts.interceptor.js';

/**
 * The admin HTTP API under /admin/v1: what the admin CLI does, over HTTP, for an organization's
 * `admin` key or a platform administrator. Exports `AdminAccessGuard` and `AdminScope` so other
 * modules can add routes under the prefix with `@AdminAccess()`.
 */
@Module({
  imports: [
    OrganizationsModule,
    ApiKeysModule,
    AssistantsModule,
    SpecialistsModule,
    ToolsModule,
    McpGatewaysModule,
    OidcModule,
    AuditLogModule,
    ApplyModule,
    LlmModule,
  ],
  controllers: [AdminOrganizationsController, AdminAgentsController],
  providers: [
    AdminAccessGuard,
    DeniedAttemptsInterceptor,
    AdminScope,
    AdminOrganizationsService,
    AdminAgentsService,
    AdminUpstreamHealthService,
    UpstreamAttemptsRepository,
  ],
  exports: [
    AdminAccessGuard,
    DeniedAttemptsInterceptor,
    AuditLogModule,
    AdminScope,
    ApiKeysModule,
    OidcModule,
  ],
})
export class AdminApiModule {}
