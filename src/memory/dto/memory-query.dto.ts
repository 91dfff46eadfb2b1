import { Transform } from 'class-transformer';
import { Allow } from 'class-validator';
import {
  AssistantFilterQuery,
  encodeCursor as encodeCursorOf,
  IssuedCursor,
  PageLimit,
  parsePrefixedUuid,
  UUID,
  type CursorFormat,
  type PageQuery,
} from '../../common/http/request-params.js';

/** A position in the newest-first order: the last item a page showed. */
export interface MemoryCursor {
  createdAt: Date;
  id: string;
}

export type MemoryListQuery = PageQuery<MemoryCursor>;

export const MEMORY_PAGE = { default: 20, max: 100 } as const;

/**
 * The last item's creation time and id. A position rather than an item id, so a page boundary
 * survives that item's deletion.
 */
const MEMORY_CURSOR: CursorFormat<MemoryCursor> = {
  parts: (cursor) => [cursor.createdAt.toISOString(), cursor.id],
  position: (parts) => {
    if (parts.length !== 2 || !UUID.test(parts[1])) return null;
    const createdAt = new Date(parts[0]);
    return Number.isNaN(createdAt.getTime()) ? null : { createdAt, id: parts[1].toLowerCase() };
  },
};

/** GET /v1/memory */
export class MemoryListQueryDto extends AssistantFilterQuery {
  @PageLimit(MEMORY_PAGE.max)
  limit: number = MEMORY_PAGE.default;

  @IssuedCursor(MEMORY_CURSOR)
  after?: MemoryCursor;
}

/** DELETE /v1/memory/:itemId */
export class MemoryItemParams {
  /** `mem_<uuid>` (as listed) or the bare UUID; anything else names no item (null, so 404). */
  @Allow()
  @Transform(({ value }: { value: string }) => parsePrefixedUuid(value, 'mem_', true))
  itemId!: string | null;
}

export function encodeCursor(cursor: MemoryCursor): string {
  return encodeCursorOf(cursor, MEMORY_CURSOR);
}
