import type { InputItem } from '../../turns/input-item.types.js';

/** POST /v1/responses/compact, parsed from its schema (request-schema/compact-response.fields.ts). */
export interface CompactResponseDto {
  assistantId: string;
  input: InputItem[];
  previousResponseId: string | null;
  instructions: string | null;
}
