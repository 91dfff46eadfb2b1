import { Module } from '@nestjs/common';
import { AssistantsModule } from '../assistants/assistants.module.js';
import { TurnStoreModule } from '../responses/store/turn-store.module.js';
import { ChatHistoryController } from './chat-history.controller.js';
import { ChatHistoryService } from './chat-history.service.js';

/** Chat history (spec 4): reads the turn store that the responses feature writes. */
@Module({
  imports: [AssistantsModule, TurnStoreModule],
  controllers: [ChatHistoryController],
  providers: [ChatHistoryService],
})
export class ConversationsModule {}
