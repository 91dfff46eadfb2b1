import { createHash } from 'node:crypto';
import OpenAI from 'openai';
import type { EmbeddingsSettings } from '../../organizations/embeddings-settings.js';
import { upstreamClient } from '../../llm/upstream-client.js';
import { withoutUnsentSdkHeaders } from '../../llm/upstream-fetch.js';
import type { FetchLike } from '../../tools/ssrf/guarded-fetch.js';
import { countTokens } from './token-count.js';

/** Texts per request when the setting names none. */
const DEFAULT_BATCH = 64;
/** The SDK's own retries (429, 5xx, connection errors, with backoff) per request. */
const MAX_RETRIES = 3;
const TIMEOUT_MS = 60_000;

/**
 * The name a store keeps for an OpenAI-compatible embedder: the model, the dimensions asked and a
 * digest of the endpoint, so a change of any of them is a different vector space (fits the
 * store's 128-character column; the URL itself is not shown to API callers).
 */
export function remoteEmbedderName(settings: EmbeddingsSettings): string {
  const digest = createHash('sha256')
    .update(`${settings.baseUrl.replace(/\/+$/, '')}\n${settings.model}\n${settings.dimensions ?? ''}`)
    .digest('hex')
    .slice(0, 12);
  return `openai-compatible:${settings.model.slice(0, 80)}:${settings.dimensions ?? 'native'}:${digest}`;
}

/** A failed embeddings call, its message fit for a file's `last_error` (no key, no address). */
export class RemoteEmbeddingError extends Error {}

/**
 * Embeds through the official `openai` SDK (`POST <baseUrl>/embeddings`), batched, retried by the
 * SDK, every request through the SSRF-guarded fetch. Each answer is checked (one vector per
 * text, the expected dimensions) and its vectors L2-normalised, as search compares by dot product.
 */
export async function embedRemotely(
  settings: EmbeddingsSettings,
  apiKey: string | undefined,
  fetch: FetchLike,
  texts: string[],
): Promise<{ vectors: Float32Array[]; tokens: number }> {
  const client = upstreamClient({
    baseURL: settings.baseUrl,
    // The SDK requires a key; an endpoint without authentication ignores the header.
    apiKey: apiKey ?? 'none',
    fetch: withoutUnsentSdkHeaders(fetch as unknown as typeof globalThis.fetch),
    maxRetries: MAX_RETRIES,
    timeout: TIMEOUT_MS,
  });
  const batch = settings.batchSize ?? DEFAULT_BATCH;
  const vectors: Float32Array[] = [];
  let tokens = 0;
  for (let at = 0; at < texts.length; at += batch) {
    const input = texts.slice(at, at + batch);
    let answer: OpenAI.Embeddings.CreateEmbeddingResponse;
    try {
      answer = await client.embeddings.create({
        model: settings.model,
        input,
        encoding_format: 'float',
        ...(settings.dimensions ? { dimensions: settings.dimensions } : {}),
      });
    } catch (error) {
      const status = error instanceof OpenAI.APIError && error.status ? ` (HTTP ${error.status})` : '';
      throw new RemoteEmbeddingError(`The organization's embeddings endpoint failed${status}`);
    }
    const data = [...(answer.data ?? [])].sort((a, b) => a.index - b.index);
    if (data.length !== input.length)
      throw new RemoteEmbeddingError(
        `The embeddings endpoint answered ${data.length} vectors for ${input.length} texts`,
      );
    for (const item of data) vectors.push(unit(item.embedding, settings.dimensions ?? vectors[0]?.length));
    // The endpoint's count; an endpoint that answers none is counted as chunking counts tokens.
    tokens +=
      answer.usage?.prompt_tokens ??
      answer.usage?.total_tokens ??
      input.reduce((sum, text) => sum + countTokens(text), 0);
  }
  return { vectors, tokens };
}

function unit(embedding: unknown, expected: number | undefined): Float32Array {
  if (!Array.isArray(embedding) || !embedding.every((value) => typeof value === 'number'))
    throw new RemoteEmbeddingError('The embeddings endpoint answered a vector that is not a list of numbers');
  if (expected !== undefined && embedding.length !== expected)
    throw new RemoteEmbeddingError(
      `The embeddings endpoint answered ${embedding.length} dimensions, ${expected} expected`,
    );
  const norm = Math.sqrt(embedding.reduce((sum: number, value: number) => sum + value * value, 0));
  return Float32Array.from(embedding, (value) => (norm > 0 ? value / norm : 0));
}
