import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

/** What one embeddings call spent, and whom it is attributed to (docs/usage.md "Embeddings"). */
export interface EmbeddingUsage {
  organizationId: string;
  /** The embeddings model: the endpoint's `model` setting, or the local embedder's name. */
  model: string;
  tokens: number;
  /** The assistant whose turn searched (file_search); none for ingestion and the Search API. */
  assistantId?: string | null;
  /** The API key of the request (the Search API); none for ingestion and file_search. */
  apiKeyId?: string | null;
  /** The request's `x-user-id`, if any. */
  userId?: string | null;
}

/** A rollup key column cannot be NULL: "no assistant" and "no key" are the nil UUID. */
export const NO_ID = '00000000-0000-0000-0000-000000000000';

/** The model column of an embeddings row, so that it never reads as a chat model. */
export const embeddingsModel = (model: string) => `embeddings:${model}`.slice(0, 256);

/**
 * Writes embeddings calls into the usage rollups the turn store also writes (usage_daily for the
 * budget, usage_hourly for the report): a row of no turns, the tokens as input tokens, no cost
 * (embeddings models have no price table), model `embeddings:<model>` in the hourly rollup. One
 * statement, its own (ingestion and searches have no turn transaction to join).
 */
@Injectable()
export class EmbeddingUsageRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async add(usage: EmbeddingUsage, at: Date): Promise<void> {
    await this.dataSource.query(
      `WITH daily AS (
         INSERT INTO usage_daily AS d (organization_id, day, assistant_id, specialist, api_key_id, user_id, currency,
                                       turns, input_tokens)
         VALUES ($1::uuid, ($2::timestamptz AT TIME ZONE 'UTC')::date, $3::uuid, '', $4::uuid, $5::varchar, '', 0,
                 $7::bigint)
         ON CONFLICT (organization_id, day, assistant_id, specialist, api_key_id, user_id, currency)
         DO UPDATE SET input_tokens = d.input_tokens + EXCLUDED.input_tokens
       )
       INSERT INTO usage_hourly AS d (organization_id, hour, assistant_id, specialist, api_key_id, user_id, model,
                                      currency, turns, input_tokens)
       VALUES ($1::uuid, date_trunc('hour', $2::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', $3::uuid, '',
               $4::uuid, $5::varchar, $6::varchar, '', 0, $7::bigint)
       ON CONFLICT (organization_id, hour, assistant_id, specialist, api_key_id, user_id, model, currency)
       DO UPDATE SET input_tokens = d.input_tokens + EXCLUDED.input_tokens`,
      [
        usage.organizationId,
        at.toISOString(),
        usage.assistantId ?? NO_ID,
        usage.apiKeyId ?? NO_ID,
        usage.userId ?? '',
        embeddingsModel(usage.model),
        usage.tokens,
      ],
    );
  }
}
