import { applyDecorators, UseGuards, UseInterceptors } from '@nestjs/common';
import { OwnAuthentication } from '../auth/auth.decorators.js';
import { AdminAccessGuard } from './admin-access.guard.js';
import { DeniedAttemptsInterceptor } from './denied-attempts.interceptor.js';

/** The admin API's prefix: `@Controller(ADMIN_PREFIX)` or `` `${ADMIN_PREFIX}/…` ``. */
export const ADMIN_PREFIX = 'admin/v1';

/**
 * Opens a route to admin callers only (an organization's `admin` key, or a platform
 * administrator's token) instead of the global API-key scopes. The handler reads who with
 * `@Caller()` and must scope every query to `AdminScope.organization(caller, …)`. Other modules
 * adding routes under /admin/v1 (usage) import AdminApiModule and use this decorator. What the
 * caller is then refused (403, 404) is audited (DeniedAttemptsInterceptor).
 */
export const AdminAccess = () =>
  applyDecorators(
    OwnAuthentication(),
    UseGuards(AdminAccessGuard),
    UseInterceptors(DeniedAttemptsInterceptor),
  );
