import { Module } from '@nestjs/common';
import { OidcModule } from '../oidc/oidc.module.js';
import { ToolsModule } from '../tools/tools.module.js';
import { McpGatewayServerService } from './mcp-gateway-server.service.js';
import { McpGatewayController } from './mcp-gateway.controller.js';
import { McpGatewayGuard } from './mcp-gateway.guard.js';
import { McpGatewaysModule } from './mcp-gateways.module.js';
import { ProtectedResourceMetadataService } from './protected-resource-metadata.service.js';

/** The MCP endpoint of every gateway and its OAuth Protected Resource Metadata. */
@Module({
  imports: [McpGatewaysModule, OidcModule, ToolsModule],
  controllers: [McpGatewayController],
  providers: [McpGatewayGuard, McpGatewayServerService, ProtectedResourceMetadataService],
})
export class McpGatewayModule {}
