/**
 * An organization's embedder (docs/knowledge.md, "Embeddings"): any OpenAI-compatible
 * `/v1/embeddings` endpoint. Platform only, like the organization's grants and allowlist: it
 * names a secret and a host, and the platform pays for the calls. Absent: the local embedder.
 */
export interface EmbeddingsSettings {
  /** The API's base URL, as the openai SDK takes it (`https://api.openai.com/v1`). */
  baseUrl: string;
  model: string;
  /** Asked of the endpoint (`dimensions`) and checked on every answer; absent: whatever the model gives. */
  dimensions?: number;
  /** The environment variable holding the bearer key; absent: no key is sent. */
  apiKeyEnv?: string;
  /** Texts per request (default 64). */
  batchSize?: number;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const KNOWN = ['baseUrl', 'model', 'dimensions', 'apiKeyEnv', 'batchSize'];
export const MAX_EMBEDDING_DIMENSIONS = 4096;
export const MAX_EMBEDDING_BATCH = 2048;

/** What is wrong with an `embeddings` setting, naming the field; null when it is valid. */
export function embeddingsSettingsProblem(raw: unknown): string | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return 'embeddings must be an object {baseUrl, model, dimensions, apiKeyEnv, batchSize} or null';
  const value = raw as Record<string, unknown>;
  const unknown = Object.keys(value).find((key) => !KNOWN.includes(key));
  if (unknown) return `embeddings.${unknown} is not a setting (${KNOWN.join(', ')})`;
  let url: URL | null;
  try {
    url = typeof value.baseUrl === 'string' ? new URL(value.baseUrl) : null;
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password)
    return 'embeddings.baseUrl must be an http(s) URL without credentials';
  if (typeof value.model !== 'string' || value.model.trim() === '' || value.model.length > 200)
    return 'embeddings.model must be a model name of 1-200 characters';
  if (!wholeNumberIn(value.dimensions, 1, MAX_EMBEDDING_DIMENSIONS))
    return `embeddings.dimensions must be a whole number from 1 to ${MAX_EMBEDDING_DIMENSIONS}`;
  if (
    value.apiKeyEnv !== undefined &&
    (typeof value.apiKeyEnv !== 'string' || !ENV_NAME.test(value.apiKeyEnv))
  )
    return 'embeddings.apiKeyEnv must be an environment variable name';
  if (!wholeNumberIn(value.batchSize, 1, MAX_EMBEDDING_BATCH))
    return `embeddings.batchSize must be a whole number from 1 to ${MAX_EMBEDDING_BATCH}`;
  return null;
}

function wholeNumberIn(value: unknown, min: number, max: number): boolean {
  return (
    value === undefined ||
    (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max)
  );
}
