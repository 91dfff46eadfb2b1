import { parseInput } from '../dto/input-items.parser.js';
import type { CompactResponseDto } from '../dto/compact-response.dto.js';
import { INPUT_SCHEMA, modelField } from './create-response.fields.js';
import { threadRequest } from './create-response.parser.js';
import {
  customField,
  KNOWN_FIELDS_ONLY,
  refuse,
  stringField,
} from '../../common/request-schema/request-field.js';
import { parseRequest } from '../../common/request-schema/request-schema.js';

/** POST /v1/responses/compact (Open Responses `CompactResponseMethodPublicBody`), in error order. */
export const COMPACT_RESPONSE_FIELDS = [
  KNOWN_FIELDS_ONLY,
  modelField,
  stringField('previous_response_id', {
    description: 'A response of the same assistant and `x-user-id`; its whole thread is compacted',
  }),
  stringField('instructions', { description: 'Kept at the top of the summary' }),
  // A caching hint only: compaction makes no model call (see docs/api.md), so nothing to forward.
  stringField('prompt_cache_key', { description: 'Accepted; compaction makes no model call' }),
  customField('input', {
    schema: INPUT_SCHEMA,
    description: 'Required unless `previous_response_id` is given; compacted after that thread',
    error: 'missing_required_field',
    parse: (value, body) => {
      if (value !== undefined && value !== null) return parseInput(value);
      if (body.previous_response_id === undefined || body.previous_response_id === null) {
        refuse('Missing required field: input (or previous_response_id)', 'missing_required_field');
      }
      return [];
    },
  }),
] as const;

export function parseCompactResponse(body: unknown): CompactResponseDto {
  return threadRequest(parseRequest(COMPACT_RESPONSE_FIELDS, body));
}
