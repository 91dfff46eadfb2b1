import { Module } from '@nestjs/common';
import { AssistantsModule } from '../assistants/assistants.module.js';
import { ChatHistoryController } from './chat-history.controller.js';
import { ChatHistoryService } from './chat-history.service.js';
import { ConversationsRepository } from './conversations.repository.js';

@Module({
  imports: [AssistantsModule],
  controllers: [ChatHistoryController],
  providers: [ConversationsRepository, ChatHistoryService],
  // The erase-user command deletes a user's history through the repository, in its transaction.
  exports: [ConversationsRepository],
})
export class ConversationsModule {}
