import { ExecutionContext, Injectable, Logger } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { Request } from 'express';
import type { ApiKeyPrincipal } from '../api-keys/api-keys.service.js';
import type { ApiKeyScope } from '../api-keys/entities/api-key.entity.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import { currentRequestContext } from '../common/logging/request-context.js';
import { API_KEY_STRATEGY, ApiKeyStrategy, OWN_API_KEY_STRATEGY } from './api-key.strategy.js';
import { HAS_OWN_AUTH, IS_PUBLIC, REQUIRED_SCOPES, type AuthenticatedRequest } from './auth.decorators.js';

type RoutePolicy = 'open' | ApiKeyScope[] | undefined;

/**
 * Deny by default: every route is closed unless it declares scopes, `@Public()` or its own auth.
 * The key is authenticated by the `api-key` passport strategy; the scopes are checked here.
 */
@Injectable()
export class ApiKeyGuard extends AuthGuard(API_KEY_STRATEGY) {
  private readonly logger = new Logger('ApiKeyGuard');
  private readonly policies = new WeakMap<object, RoutePolicy>();

  constructor(
    private readonly reflector: Reflector,
    private readonly strategy: ApiKeyStrategy,
  ) {
    super();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const required = this.policyOf(context);
    if (required === 'open') return true;

    const request = context.switchToHttp().getRequest<Request & AuthenticatedRequest>();
    Object.assign(request, { [OWN_API_KEY_STRATEGY]: this.strategy });
    await super.canActivate(context);
    const principal = request.principal!;

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
    const log = currentRequestContext();
    if (log) log.organizationId = principal.organizationId;
    return true;
  }

  /**
   * The route's access policy from its decorators: `open` (public or its own authentication),
   * its scopes, or undefined (declares none). Metadata is fixed per handler, so it is read once.
   */
  private policyOf(context: ExecutionContext): RoutePolicy {
    const handler = context.getHandler();
    if (this.policies.has(handler)) return this.policies.get(handler);
    const targets = [handler, context.getClass()];
    const policy: RoutePolicy =
      this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets) ||
      this.reflector.getAllAndOverride<boolean>(HAS_OWN_AUTH, targets)
        ? 'open'
        : this.reflector.getAllAndOverride<ApiKeyScope[] | undefined>(REQUIRED_SCOPES, targets);
    this.policies.set(handler, policy);
    return policy;
  }

  override getAuthenticateOptions(): { session: false; property: keyof AuthenticatedRequest } {
    return { session: false, property: 'principal' };
  }

  /** The strategy fails with the envelope's own error (missing or invalid key). */
  override handleRequest<User = ApiKeyPrincipal>(err: unknown, user: User | false, info: unknown): User {
    // Any error (a database outage while looking the key up) is the filter's to map, never a
    // "wrong key": not `instanceof Error`, which fails for errors made in another realm.
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrown as the strategy gave it
    if (err) throw err;
    if (user) return user;
    throw info instanceof ApiError
      ? info
      : new ApiError('invalid_api_key', 'The API key is malformed, unknown or revoked');
  }
}
