import { Module } from '@nestjs/common';
import { ClaimsModule } from '../claims/claims.module.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { MemoryModule } from '../memory/memory.module.js';
import { UserErasureService } from './user-erasure.service.js';

/** Operations on an end user across features; used by the admin command-line tool. */
@Module({
  imports: [ConversationsModule, ClaimsModule, MemoryModule],
  providers: [UserErasureService],
  exports: [UserErasureService],
})
export class UsersModule {}
