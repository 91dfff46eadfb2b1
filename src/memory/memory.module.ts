import { Module } from '@nestjs/common';
import { AssistantsModule } from '../assistants/assistants.module.js';
import { MemoryController } from './memory.controller.js';
import { MemoryRepository } from './memory.repository.js';
import { MemoryService } from './memory.service.js';
import { SaveToMemoryTool } from './save-to-memory.tool.js';
import { UserContextRepository } from './user-context.repository.js';
import { UserContextService } from './user-context.service.js';

@Module({
  imports: [AssistantsModule],
  controllers: [MemoryController],
  providers: [MemoryRepository, MemoryService, UserContextRepository, UserContextService, SaveToMemoryTool],
  // Turns use the loader and the tool; the erase-user command uses the repository in its transaction.
  exports: [MemoryService, UserContextService, SaveToMemoryTool, MemoryRepository],
})
export class MemoryModule {}
