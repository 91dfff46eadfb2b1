import { Module } from '@nestjs/common';
import { ClaimsController } from './claims.controller.js';
import { ClaimsRepository } from './claims.repository.js';
import { ClaimsService } from './claims.service.js';

@Module({
  controllers: [ClaimsController],
  providers: [ClaimsRepository, ClaimsService],
  // The repository too: the erase-user command calls its eraseUserContext in its transaction.
  exports: [ClaimsService, ClaimsRepository],
})
export class ClaimsModule {}
