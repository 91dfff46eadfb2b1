import { Module } from '@nestjs/common';
import { AssistantsRepository } from './assistants.repository.js';
import { AssistantsService } from './assistants.service.js';

@Module({
  providers: [AssistantsRepository, AssistantsService],
  exports: [AssistantsService],
})
export class AssistantsModule {}
