import { Module } from '@nestjs/common';
import { ClaimsModule } from '../claims/claims.module.js';
import { FilesModule } from '../files/files.module.js';
import { MemoryModule } from '../memory/memory.module.js';
import { TurnStoreModule } from '../responses/store/turn-store.module.js';
import { UserErasureService } from './user-erasure.service.js';

/** Operations on an end user across features; used by the admin command-line tool. */
@Module({
  imports: [TurnStoreModule, ClaimsModule, MemoryModule, FilesModule],
  providers: [UserErasureService],
  exports: [UserErasureService],
})
export class UsersModule {}
