import {
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Options,
  Param,
  Post,
  Req,
  Res,
  UseGuards,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { OwnAuthentication, Public } from '../auth/auth.decorators.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { GatewayMessageBody } from './gateway-message-body.js';
import { McpGatewayServerService } from './mcp-gateway-server.service.js';
import { McpGatewayGuard, type GatewayRequest } from './mcp-gateway.guard.js';
import { enforceOrigin, preflightHeaders } from './origin-policy.js';
import {
  ProtectedResourceMetadataService,
  type ProtectedResourceMetadata,
} from './protected-resource-metadata.service.js';

/**
 * The MCP gateway, outside `/v1` (and never under `/api`): the admin origin proxies
 * `/mcp-gateway/*` here unchanged.
 */
@Controller()
export class McpGatewayController {
  private readonly body: GatewayMessageBody;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly server: McpGatewayServerService,
    private readonly metadata: ProtectedResourceMetadataService,
  ) {
    this.body = new GatewayMessageBody(config.server.bodyLimitBytes);
  }

  /** Origin, gateway and token (the guard), and only then the body. */
  @OwnAuthentication()
  @UseGuards(McpGatewayGuard)
  @Post('mcp-gateway/:name')
  async handle(@Req() req: Request & GatewayRequest, @Res() res: Response): Promise<void> {
    const { gateway } = req.mcpGateway!;
    if (!(await this.body.readInto(req, res))) return;
    await this.server.handle(gateway, req, res);
  }

  /** A stateless server offers no SSE stream to GET and has no session to DELETE. */
  @Public()
  @Get('mcp-gateway/:name')
  openStream(): never {
    throw methodNotAllowed();
  }

  @Public()
  @Delete('mcp-gateway/:name')
  endSession(): never {
    throw methodNotAllowed();
  }

  /** CORS preflight of browser-based clients (MCP Inspector in direct mode). */
  @Public()
  @Options('mcp-gateway/:name')
  @HttpCode(204)
  preflight(@Req() req: Request, @Res({ passthrough: true }) res: Response): void {
    enforceOrigin(this.config, req, res);
    preflightHeaders(res);
  }

  /**
   * The gateway's OAuth Protected Resource Metadata, at the location the `WWW-Authenticate`
   * challenge names and at RFC 9728's own (`/.well-known/oauth-protected-resource` + the path).
   */
  @Public()
  @Get([
    'mcp-gateway/:name/.well-known/oauth-protected-resource',
    '.well-known/oauth-protected-resource/mcp-gateway/:name',
  ])
  async metadataDocument(
    @Param('name') name: string,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ProtectedResourceMetadata> {
    // Public metadata: browser-based clients read it (and its 404) from any origin.
    res.setHeader('Access-Control-Allow-Origin', '*');
    const document = await this.metadata.describe(name, req);
    res.setHeader('Cache-Control', 'public, max-age=300');
    return document;
  }
}

function methodNotAllowed(): ApiError {
  return new ApiError(
    'method_not_allowed',
    'This MCP endpoint is stateless: send JSON-RPC messages with POST',
    {
      Allow: 'POST',
    },
  );
}
