import { ApiError } from '../../common/errors/error-catalogue.js';
import { parseAssistantId, parseInput } from './create-response.dto.js';
import type { InputItem } from '../../turns/input-item.types.js';

/** POST /v1/responses/compact (Open Responses `CompactResponseMethodPublicBody`). */
export interface CompactResponseDto {
  assistantId: string;
  input: InputItem[];
  previousResponseId: string | null;
  instructions: string | null;
}

const KNOWN_FIELDS = new Set(['model', 'input', 'previous_response_id', 'instructions', 'prompt_cache_key']);

function optionalString(body: Record<string, unknown>, key: string): string | null {
  const value = body[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new ApiError('invalid_request', `${key} must be a string`);
  return value;
}

export function parseCompactResponse(body: unknown): CompactResponseDto {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError('invalid_request', 'The request body must be a JSON object');
  }
  const fields = body as Record<string, unknown>;
  if (fields.model === undefined || fields.model === null) {
    throw new ApiError('missing_required_field', 'Missing required field: model');
  }
  for (const key of Object.keys(fields)) {
    if (!KNOWN_FIELDS.has(key)) throw new ApiError('invalid_request', `Unknown parameter: ${key}`);
  }
  if (typeof fields.model !== 'string') throw new ApiError('invalid_model', 'model must be an assistant id');
  const assistantId = parseAssistantId(fields.model);
  if (!assistantId) {
    throw new ApiError('invalid_model', 'model must be an assistant UUID, bare or as asst_<uuid>');
  }
  const previousResponseId = optionalString(fields, 'previous_response_id');
  const instructions = optionalString(fields, 'instructions');
  // A caching hint only: compaction makes no model call (see docs/api.md), so nothing to forward.
  optionalString(fields, 'prompt_cache_key');
  const hasInput = fields.input !== undefined && fields.input !== null;
  if (!hasInput && previousResponseId === null) {
    throw new ApiError('missing_required_field', 'Missing required field: input (or previous_response_id)');
  }
  return { assistantId, input: hasInput ? parseInput(fields.input) : [], previousResponseId, instructions };
}
