import { Controller, Delete, Param } from '@nestjs/common';
import { ADMIN_PREFIX, AdminAccess } from '../../admin-api/admin-access.decorator.js';
import { Caller, type AdminCaller } from '../../admin-api/admin-caller.js';
import { AdminScope } from '../../admin-api/admin-scope.service.js';
import { ApiError } from '../../common/errors/error-catalogue.js';
import { MAX_USER_ID_LENGTH } from '../../common/http/request-params.js';
import { erasureChange, UserErasureService } from '../user-erasure.service.js';

/**
 * `users erase` over HTTP: an organization's admin key erases its own organization's end user, a
 * platform administrator any organization's. The erasure and its audit row share one transaction.
 */
@Controller(ADMIN_PREFIX)
@AdminAccess()
export class UsersAdminController {
  constructor(
    private readonly scope: AdminScope,
    private readonly erasure: UserErasureService,
  ) {}

  @Delete('organizations/:org/users/:userId')
  async erase(@Caller() caller: AdminCaller, @Param('org') org: string, @Param('userId') userId: string) {
    if (userId.length === 0 || userId.length > MAX_USER_ID_LENGTH) {
      throw new ApiError('invalid_request', `userId must be 1 to ${MAX_USER_ID_LENGTH} characters`);
    }
    const organization = await this.scope.organization(caller, org);
    return this.scope.write(caller, async (manager) => {
      const deleted = await this.erasure.eraseIn(manager, organization.id, userId);
      return {
        value: {
          object: 'user.erasure',
          organization: { id: organization.id, slug: organization.slug },
          userId,
          deleted,
        },
        changes: [erasureChange(organization.id, userId, deleted)],
      };
    });
  }
}
