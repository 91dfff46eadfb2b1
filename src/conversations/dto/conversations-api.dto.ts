import { ArrayMaxSize, ArrayNotEmpty, IsArray, IsObject, IsOptional } from 'class-validator';
import { ApiError } from '../../common/errors/error-catalogue.js';
import {
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
  // The pipe reports the first failed rule, and the rule nearest the property runs first.
  @IsOptional()
  @ArrayMaxSize(MAX_ITEMS_PER_REQUEST, {
    message: `items: at most ${MAX_ITEMS_PER_REQUEST} items per request`,
  })
  @IsArray({ message: 'items must be an array of input items' })
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
  @ArrayMaxSize(MAX_ITEMS_PER_REQUEST, {
    message: `items: at most ${MAX_ITEMS_PER_REQUEST} items per request`,
  })
  @ArrayNotEmpty({ message: 'items must not be empty' })
  @IsArray({ message: 'items must be an array of input items' })
  items?: unknown[];
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
 * `include` (as `include` or, from the official SDKs, `include[]`) on the routes that take no
 * other query parameter, as the item list (ListInputItemsQueryDto) takes it: image URLs are
 * always in the items, so that value changes nothing; any other is refused by name.
 */
export function refuseInclude(query: Record<string, unknown>): void {
  const values = [query['include'], query['include[]']].flat().filter((value) => value !== undefined);
  const unsupported = values.find((value) => value !== 'message.input_image.image_url');
  if (unsupported !== undefined) {
    throw new ApiError(
      'invalid_request',
      `include value ${JSON.stringify(unsupported)} is not supported by this endpoint (supported: message.input_image.image_url)`,
    );
  }
}
