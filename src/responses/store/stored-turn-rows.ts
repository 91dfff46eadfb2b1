import type { ChatMessage } from '../../llm/llm.types.js';
import type { BranchTurn, StoredInputItem } from '../conversation-items.js';
import type { TurnStatus } from '../../turns/turn.types.js';
import type { OutputItem } from '../../turns/output-item.types.js';
import { outputTextOf } from '../../turns/output-text.js';

/**
 * How a stored turn's row reads back (TurnStore.findResponse, ConversationStore.branchTurns).
 * `output_text` repeats the text of `output`'s message items: a row may leave it empty, and it is
 * then read from `output` (outputTextOf), so that a later release can stop storing that copy while
 * this one serves the same bodies and items (docs/benchmarks.md, round "textonce").
 */
const textOf = (row: { output: OutputItem[]; output_text: string | null }): string =>
  row.output_text || outputTextOf(row.output);

export interface StoredResponse {
  id: string;
  assistantId: string;
  conversationId: string;
  previousResponseId: string | null;
  status: TurnStatus;
  instructions: string | null;
  output: OutputItem[];
  outputText: string;
  usage: Record<string, number> | null;
  error: { type: string; code: string; message: string } | null;
  createdAt: Date;
  /** Null while the turn runs. */
  completedAt: Date | null;
  /** The stored Response object; null for responses stored before it was kept. */
  body: unknown;
  background: boolean;
}

/**
 * A response of an organization ($2) and end user ($3, an anonymous one only for anonymous
 * callers) by its id ($1); items appended through the Conversations API (no assistant) are none.
 */
export const FIND_RESPONSE = `SELECT id, assistant_id, conversation_id, previous_response_id, status, instructions, output,
              output_text, usage, error, created_at, completed_at, body, background
         FROM responses
        WHERE id = $1 AND organization_id = $2 AND user_id IS NOT DISTINCT FROM $3::varchar
          AND assistant_id IS NOT NULL`;

export function storedResponse(row: Record<string, unknown>): StoredResponse {
  const output = row.output as OutputItem[];
  return {
    id: row.id as string,
    assistantId: row.assistant_id as string,
    conversationId: row.conversation_id as string,
    previousResponseId: row.previous_response_id as string | null,
    status: row.status as TurnStatus,
    instructions: row.instructions as string | null,
    output,
    outputText: textOf({ output, output_text: row.output_text as string | null }),
    usage: row.usage as Record<string, number> | null,
    error: row.error as StoredResponse['error'],
    createdAt: row.created_at as Date,
    completedAt: row.completed_at as Date | null,
    body: row.body,
    background: row.background as boolean,
  };
}

/** The turns of a conversation's ($2, of organization $1) branch ending at $3, oldest first. */
export const BRANCH_TURNS = `WITH RECURSIVE branch AS (
         SELECT id, previous_response_id, depth FROM responses
          WHERE id = $3 AND organization_id = $1 AND conversation_id = $2
         UNION ALL
         SELECT r.id, r.previous_response_id, r.depth
           FROM responses r JOIN branch b ON r.id = b.previous_response_id
          WHERE r.organization_id = $1 AND r.conversation_id = $2
       )
       SELECT r.id, r.assistant_id, r.input, r.output, r.transcript, r.output_text
         FROM branch b JOIN responses r ON r.id = b.id
        ORDER BY b.depth`;

export interface BranchRow {
  id: string;
  assistant_id: string | null;
  input: StoredInputItem[];
  output: OutputItem[];
  transcript: ChatMessage[];
  output_text: string | null;
}

export function branchTurn(row: BranchRow): BranchTurn {
  return {
    id: row.id,
    assistantId: row.assistant_id,
    input: row.input,
    output: row.output,
    transcript: row.transcript,
    outputText: textOf(row),
  };
}
