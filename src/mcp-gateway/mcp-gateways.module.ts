import { Module } from '@nestjs/common';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { GatewaysApplySection } from './gateways.apply-section.js';
import { McpGatewaysRepository } from './mcp-gateways.repository.js';
import { McpGatewaysService } from './mcp-gateways.service.js';

/** Gateway configuration: storage, the service the CLI drives, and the `apply -f` section. */
@Module({
  imports: [OrganizationsModule],
  providers: [McpGatewaysRepository, McpGatewaysService, GatewaysApplySection],
  exports: [McpGatewaysService],
})
export class McpGatewaysModule {}
