import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { TokenVerifierService } from '../oidc/token-verifier.service.js';
import { gatewayUrls } from './gateway-urls.js';
import { findGateways } from './mcp-gateway.guard.js';
import { McpGatewaysService } from './mcp-gateways.service.js';

/** RFC 9728 OAuth 2.0 Protected Resource Metadata, the fields this gateway publishes. */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported: string[];
  bearer_methods_supported: string[];
  resource_name: string;
}

@Injectable()
export class ProtectedResourceMetadataService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly gateways: McpGatewaysService,
    private readonly tokens: TokenVerifierService,
  ) {}

  /** Tells an MCP client which authorization server issues tokens for the gateway; 404 if none is named so. */
  async describe(name: string, req: Request): Promise<ProtectedResourceMetadata> {
    await findGateways(this.tokens, this.gateways, name);
    return {
      resource: gatewayUrls(this.config, req, name).resource,
      authorization_servers: [this.config.oidc.issuer ?? ''],
      scopes_supported: this.config.mcpGateway.scopesSupported,
      bearer_methods_supported: ['header'],
      resource_name: `Switchboard MCP gateway ${name}`,
    };
  }
}
