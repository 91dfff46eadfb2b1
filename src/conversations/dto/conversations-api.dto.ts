import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  IsArray,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Max,
  Min,
} from 'class-validator';
import { ApiError } from '../../common/errors/error-catalogue.js';
import {
  ITEM_PAGE,
  MAX_ITEMS_PER_REQUEST,
  MAX_METADATA_KEY_LENGTH,
  MAX_METADATA_KEYS,
  MAX_METADATA_VALUE_LENGTH,
} from './conversation-limits.js';

/**
 * Bodies and queries of the Conversations API (OpenAI's shapes), checked by the global
 * validation pipe. Items are parsed by the same parser as POST /v1/responses' `input`, so an item
 * is accepted here exactly when it would be accepted there.
 */

export class CreateConversationDto {
  @IsOptional()
  @IsArray({ message: 'items must be an array of input items' })
  @ArrayMaxSize(MAX_ITEMS_PER_REQUEST, {
    message: `items: at most ${MAX_ITEMS_PER_REQUEST} items per request`,
  })
  items?: unknown[] | null;

  @IsOptional()
  @IsObject({ message: 'metadata must be an object of string values' })
  metadata?: Record<string, unknown> | null;
}

export class UpdateConversationDto {
  // OpenAI requires the field; null clears the metadata.
  @IsObject({ message: 'metadata must be an object of string values' })
  @IsOptional()
  metadata!: Record<string, unknown> | null;
}

export class CreateItemsDto {
  // Required: its absence is reported as a missing field by the controller, not as three failed rules.
  @IsOptional()
  @IsArray({ message: 'items must be an array of input items' })
  @ArrayNotEmpty({ message: 'items must not be empty' })
  @ArrayMaxSize(MAX_ITEMS_PER_REQUEST, {
    message: `items: at most ${MAX_ITEMS_PER_REQUEST} items per request`,
  })
  items?: unknown[];
}

export class ListItemsQueryDto {
  @IsOptional()
  @IsString({ message: 'after must be an item id, given once' })
  after?: string;

  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: `limit must be a whole number from 1 to ${ITEM_PAGE.max}` })
  @Min(1, { message: `limit must be a whole number from 1 to ${ITEM_PAGE.max}` })
  @Max(ITEM_PAGE.max, { message: `limit must be a whole number from 1 to ${ITEM_PAGE.max}` })
  limit?: number;

  @IsOptional()
  @IsIn(['asc', 'desc'], { message: 'order must be asc or desc' })
  order?: 'asc' | 'desc';
}

/** OpenAI's metadata: at most 16 pairs, keys up to 64 characters, string values up to 512. */
export function checkMetadata(metadata: Record<string, unknown> | null | undefined): Record<string, string> {
  if (metadata === null || metadata === undefined) return {};
  const entries = Object.entries(metadata);
  if (entries.length > MAX_METADATA_KEYS) {
    throw new ApiError(
      'invalid_request',
      `metadata has ${entries.length} keys; at most ${MAX_METADATA_KEYS}`,
    );
  }
  for (const [key, value] of entries) {
    if (key.length > MAX_METADATA_KEY_LENGTH) {
      throw new ApiError(
        'invalid_request',
        `metadata keys must be at most ${MAX_METADATA_KEY_LENGTH} characters (got ${key.length})`,
      );
    }
    if (typeof value !== 'string' || value.length > MAX_METADATA_VALUE_LENGTH) {
      throw new ApiError(
        'invalid_request',
        `metadata.${key} must be a string of at most ${MAX_METADATA_VALUE_LENGTH} characters`,
      );
    }
  }
  return metadata as Record<string, string>;
}

/**
 * `include` (as `include` or, from the official SDKs, `include[]`): no value of OpenAI's list
 * concerns an item this service stores (no images, logprobs, reasoning or hosted-tool results in
 * conversation items), so any value is refused by name rather than ignored.
 */
export function refuseInclude(query: Record<string, unknown>): void {
  const raw = query['include'] ?? query['include[]'];
  if (raw === undefined) return;
  const values = (Array.isArray(raw) ? raw : [raw]).map(String).filter((value) => value !== '');
  if (values.length > 0) {
    throw new ApiError('invalid_request', `include value ${JSON.stringify(values[0])} is not supported`);
  }
}
