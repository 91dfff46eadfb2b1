import { Module } from '@nestjs/common';
import { AssistantsModule } from '../assistants/assistants.module.js';
import { LlmModule } from '../llm/llm.module.js';
import { MemoryModule } from '../memory/memory.module.js';
import { SpecialistsModule } from '../specialists/specialists.module.js';
import { ToolsModule } from '../tools/tools.module.js';
import { ResponsesController } from './responses.controller.js';
import { ResponsesRepository } from './responses.repository.js';
import { ResponsesService } from './responses.service.js';
import { TurnRunner } from './turn-runner.js';

@Module({
  imports: [AssistantsModule, LlmModule, MemoryModule, SpecialistsModule, ToolsModule],
  controllers: [ResponsesController],
  providers: [ResponsesRepository, ResponsesService, TurnRunner],
})
export class ResponsesModule {}
