import { ApiError } from '../../common/errors/error-catalogue.js';
import { invalidCursor, parsePageLimit, singleQueryParam } from '../../common/http/request-params.js';

/** GET /v1/responses/{id}/input_items: OpenAI's cursor list parameters. */
export interface ListInputItemsQuery {
  /** An item id of the previous page (its `last_id`), or null for the first page. */
  after: string | null;
  limit: number;
  order: 'asc' | 'desc';
}

/**
 * `include` values this endpoint honours. Image URLs (and file data) are always in the items,
 * so asking for them changes nothing; any other value is refused by name.
 */
const SUPPORTED_INCLUDES = new Set(['message.input_image.image_url']);

export function parseListInputItems(query: Record<string, unknown>): ListInputItemsQuery {
  if (query.before !== undefined) {
    throw new ApiError('invalid_request', 'before is not supported by this endpoint: page with after');
  }
  const include = query.include ?? query['include[]'];
  for (const value of include === undefined ? [] : [include].flat()) {
    if (typeof value !== 'string' || !SUPPORTED_INCLUDES.has(value)) {
      throw new ApiError(
        'invalid_request',
        `include value ${JSON.stringify(value)} is not supported by this endpoint (supported: ${[...SUPPORTED_INCLUDES].join(', ')})`,
      );
    }
  }
  const order = singleQueryParam(query, 'order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc')
    throw new ApiError('invalid_request', 'order must be "asc" or "desc"');
  const after = singleQueryParam(query, 'after');
  if (after !== undefined && (after.length === 0 || after.length > 300)) throw invalidCursor();
  return { after: after ?? null, limit: parsePageLimit(query, { default: 20, max: 100 }), order };
}
