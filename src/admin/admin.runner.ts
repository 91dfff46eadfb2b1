import { keyCommands } from '../api-keys/admin/keys.commands.js';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import { createAdminRunner } from '../admin-framework/admin-runner.js';
import type { AdminFeature } from '../admin-framework/admin-tool.module.js';
import { ENTITIES } from '../entities.js';
import { assistantCommands } from '../assistants/admin/assistants.commands.js';
import { AssistantsModule } from '../assistants/assistants.module.js';
import { gatewayCommands } from '../mcp-gateway/gateways.commands.js';
import { McpGatewaysModule } from '../mcp-gateway/mcp-gateways.module.js';
import { organizationCommands } from '../organizations/admin/organizations.commands.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { specialistCommands } from '../specialists/admin/specialists.commands.js';
import { SpecialistsModule } from '../specialists/specialists.module.js';
import { toolCommands } from '../tools/admin/tools.commands.js';
import { ToolsModule } from '../tools/tools.module.js';
import { userCommands } from '../users/admin/users.commands.js';
import { UsersModule } from '../users/users.module.js';

/**
 * The admin command-line tool as shipped: the features it knows, in the order `help` lists their
 * commands (then `apply`, which the framework adds). A feature whose resources `apply` should
 * know provides its section in the module listed here. Like AppModule for the HTTP service, this
 * is a composition root: the only admin file that imports features.
 */
export const ADMIN_FEATURES: readonly AdminFeature[] = [
  { module: OrganizationsModule, commands: organizationCommands },
  { module: ApiKeysModule, commands: keyCommands },
  { module: AssistantsModule, commands: assistantCommands },
  { module: SpecialistsModule, commands: specialistCommands },
  { module: ToolsModule, commands: toolCommands },
  { module: McpGatewaysModule, commands: gatewayCommands },
  { module: UsersModule, commands: userCommands },
];

/**
 * Runs one admin command and returns its exit code (0 success, 1 error on stderr). `env`
 * replaces the process environment, so tests point the tool at their own database.
 */
export const runAdmin = createAdminRunner({ features: ADMIN_FEATURES, entities: ENTITIES });
