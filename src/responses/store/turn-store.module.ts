import { Module } from '@nestjs/common';
import { ChatHistoryRepository } from './chat-history.repository.js';
import { ConversationStore } from './conversation-store.repository.js';
import { StartRecords } from './start-records.js';
import { TurnLedger } from './turn-ledger.repository.js';
import { TurnStore } from './turn-store.repository.js';

/**
 * Owner of the responses, conversations and messages tables. Responses write turns through it,
 * chat history reads through it, and the erase-user command deletes through it.
 */
@Module({
  providers: [TurnStore, TurnLedger, StartRecords, ChatHistoryRepository, ConversationStore],
  exports: [TurnStore, TurnLedger, StartRecords, ChatHistoryRepository, ConversationStore],
})
export class TurnStoreModule {}
