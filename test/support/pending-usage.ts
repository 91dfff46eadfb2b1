import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';

/** A turn's usage as another replica left it: stored, not flushed yet (`usage_pending`). */
export interface PendingTurn {
  organizationId: string;
  assistantId: string;
  at: Date;
  inputTokens: number;
  outputTokens: number;
  model?: string;
  currency?: string;
  cost?: number;
}

/**
 * Writes the `usage_pending` row another replica's stored turn leaves until its flush, with the
 * turn's assistant as its key (an API key id is only a rollup dimension); returns the row's id.
 */
export async function insertPendingTurn(dataSource: DataSource, turn: PendingTurn): Promise<string> {
  const responseId = randomUUID();
  await dataSource.query(
    `INSERT INTO usage_pending (response_id, organization_id, completed_at, assistant_id, specialist, api_key_id,
                                user_id, usage_rows)
     VALUES ($1, $2, $3, $4, '', $4, '', $5)`,
    [
      responseId,
      turn.organizationId,
      turn.at,
      turn.assistantId,
      JSON.stringify([
        {
          model: turn.model ?? '',
          currency: turn.currency ?? '',
          turns: 1,
          input_tokens: turn.inputTokens,
          cached_tokens: 0,
          output_tokens: turn.outputTokens,
          reasoning_tokens: 0,
          cost: turn.cost ?? 0,
        },
      ]),
    ],
  );
  return responseId;
}
