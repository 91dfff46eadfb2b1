import type { ChatMessage, UpstreamAttempt } from '../llm/llm.types.js';
import type { StoredMessages } from '../llm/stored-messages.js';
import type { OutputItem } from './output-item.types.js';

/** What the turn's rows say of it; `queued` and `in_progress` while it runs somewhere. */
export type TurnStatus =
  'queued' | 'in_progress' | 'completed' | 'requires_action' | 'incomplete' | 'failed' | 'cancelled';

/** The end of the branch a new turn continues, with the whole model transcript before it. */
export interface ThreadHead {
  responseId: string;
  conversationId: string;
  depth: number;
  status: TurnStatus;
  output: OutputItem[];
  activeAgent: string | null;
  /** The model transcript of the whole thread, as stored (parsed only by what reads it message by message). */
  history: StoredMessages;
  /** False when a response of the chain was deleted: the thread cannot be rebuilt whole. */
  complete: boolean;
}

/** What a turn's start and its end write alike: the row's keys, its thread and its input. */
export interface TurnRow {
  responseId: string;
  organizationId: string;
  assistantId: string;
  conversationId: string;
  /** Set only when this turn starts the conversation. */
  newConversationTitle: string | null;
  previousResponseId: string | null;
  userId: string | null;
  status: TurnStatus;
  depth: number;
  activeAgent: string | null;
  instructions: string | null;
  input: unknown[];
  createdAt: Date;
  /** Chat-history messages: the user's text, and the reply unless the turn failed. */
  messages: { id: string; role: 'user' | 'assistant'; content: string; position: number; createdAt: Date }[];
}

/** Everything one finished turn writes, in a single statement. */
export interface TurnRecord extends TurnRow {
  output: OutputItem[];
  outputText: string;
  transcript: ChatMessage[];
  usage: object | null;
  error: { type: string; code: string; message: string } | null;
  completedAt: Date;
  /** The Response object exactly as the client was sent it, for GET (JSON text, key order kept). */
  body: string | null;
  /**
   * The turn starts its conversation (no previous response, no conversation named), so nothing
   * exists under its id yet: a turn stored whole inserts it plainly.
   */
  newConversation?: boolean;
  /** The API key that asked, for the usage rollup. */
  apiKeyId: string;
  /** The upstream targets the turn's model calls tried (none for the offline model). */
  upstreamAttempts?: UpstreamAttempt[];
  /**
   * The turn's tokens by answering model and currency of its prices (`''`: unpriced), left
   * pending for the usage rollups; the first row counts the turn. Empty when the upstream reported nothing.
   */
  usageRows: TurnUsageRow[];
}

export interface TurnUsageRow {
  /** The upstream model that answered (`offline` for the offline model); absent or `''`: not known. */
  model?: string;
  currency: string;
  turns: number;
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  cost: number;
}

/** What a turn stores when it starts: enough that a lost replica leaves a findable, honest row. */
export interface TurnStart extends TurnRow {
  status: 'queued' | 'in_progress';
  /** The input as the model sees it: a lost turn keeps it in the thread, as a failed one does. */
  transcript: ChatMessage[];
  background: boolean;
  /** The turn starts its conversation: the start inserts it; any other turn's start only updates it. */
  newConversation: boolean;
  /**
   * What the request continues, as its client named it: a start whose conversation is gone
   * answers the preparer's not-found error for it. Absent for a turn that starts a conversation.
   */
  continued?: { kind: 'conversation' | 'response'; id: string };
  /** The Response object the start announces (JSON text), until the final write replaces it. */
  body: string;
  ownerId: string;
  leaseMs: number;
}
