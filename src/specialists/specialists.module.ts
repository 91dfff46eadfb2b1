import { Module } from '@nestjs/common';
import { AgentRosterService } from './agent-roster.service.js';
import { SpecialistsRepository } from './specialists.repository.js';
import { SpecialistsService } from './specialists.service.js';

@Module({
  providers: [SpecialistsRepository, SpecialistsService, AgentRosterService],
  exports: [SpecialistsService, AgentRosterService],
})
export class SpecialistsModule {}
