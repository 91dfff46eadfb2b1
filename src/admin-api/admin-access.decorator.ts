import { applyDecorators, UseGuards } from '@nestjs/common';
import { OwnAuthentication } from '../auth/auth.decorators.js';
import { AdminAccessGuard } from './admin-access.guard.js';

/**
 * Opens a route to admin callers only (an organization's `admin` key, or a platform
 * administrator's token) instead of the global API-key scopes. The handler reads who with
 * `@Caller()` and must scope every query to `AdminScope.organization(caller, …)`. Other modules
 * adding routes under /admin/v1 (usage) import AdminApiModule and use this decorator.
 */
export const AdminAccess = () => applyDecorators(OwnAuthentication(), UseGuards(AdminAccessGuard));
