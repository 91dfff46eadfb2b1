import { Module } from '@nestjs/common';
import { AdminApiModule } from '../../admin-api/admin-api.module.js';
import { UsersModule } from '../users.module.js';
import { UsersAdminController } from './users-admin.controller.js';

/** The end-user routes of the admin API (erasure); the CLI uses UsersModule without them. */
@Module({
  imports: [AdminApiModule, UsersModule],
  controllers: [UsersAdminController],
})
export class UsersAdminModule {}
