import { CanActivate, ExecutionContext, Injectable, Logger } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { ApiKeysService } from '../api-keys/api-keys.service.js';
import type { ApiKeyScope } from '../api-keys/entities/api-key.entity.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import { currentRequestContext } from '../common/logging/request-context.js';
import { HAS_OWN_AUTH, IS_PUBLIC, REQUIRED_SCOPES, type AuthenticatedRequest } from './auth.decorators.js';

/** Reads the key from `x-api-key` or `Authorization: Bearer`; the two are equivalent. */
export function presentedApiKey(req: Request): string | undefined {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string' && header.length > 0) return header.trim();
  const authorization = req.headers.authorization;
  if (authorization) {
    const match = /^Bearer\s+(.+)$/i.exec(authorization);
    return match ? match[1].trim() : authorization.trim();
  }
  return undefined;
}

/** Deny by default: every route is closed unless it declares scopes, `@Public()` or its own auth. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly logger = new Logger('ApiKeyGuard');

  constructor(
    private readonly reflector: Reflector,
    private readonly apiKeys: ApiKeysService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;
    if (this.reflector.getAllAndOverride<boolean>(HAS_OWN_AUTH, targets)) return true;
    const required = this.reflector.getAllAndOverride<ApiKeyScope[] | undefined>(REQUIRED_SCOPES, targets);

    const req = context.switchToHttp().getRequest<Request & AuthenticatedRequest>();
    const presented = presentedApiKey(req);
    if (!presented)
      throw new ApiError('missing_api_key', 'Send an API key in x-api-key or Authorization: Bearer');
    const principal = await this.apiKeys.authenticate(presented);
    if (!principal) throw new ApiError('invalid_api_key', 'The API key is malformed, unknown or revoked');

    if (!required) {
      this.logger.error({
        msg: 'route declares no access policy; denied',
        handler: context.getHandler().name,
      });
      throw new ApiError('insufficient_scope', 'This route is not open to API keys');
    }
    const allowed =
      principal.scopes.includes('full_access') || required.some((s) => principal.scopes.includes(s));
    if (!allowed) {
      throw new ApiError(
        'insufficient_scope',
        `This API key needs scope ${[...required, 'full_access'].map((s) => `"${s}"`).join(' or ')}`,
      );
    }
    req.principal = principal;
    const log = currentRequestContext();
    if (log) log.organizationId = principal.organizationId;
    return true;
  }
}
