import { Module } from '@nestjs/common';
import { AssistantsModule } from '../assistants/assistants.module.js';
import { TurnStoreModule } from '../responses/store/turn-store.module.js';
import { ChatHistoryController } from './chat-history.controller.js';
import { ChatHistoryService } from './chat-history.service.js';
import { ConversationsApiController } from './conversations-api.controller.js';
import { ConversationItemWriter } from './conversation-item-writer.js';
import { ConversationsApiService } from './conversations-api.service.js';

/**
 * Chat history (spec 4) and the Conversations API: two views of the turn store that the
 * responses feature owns.
 */
@Module({
  imports: [AssistantsModule, TurnStoreModule],
  controllers: [ChatHistoryController, ConversationsApiController],
  providers: [ChatHistoryService, ConversationsApiService, ConversationItemWriter],
})
export class ConversationsModule {}
