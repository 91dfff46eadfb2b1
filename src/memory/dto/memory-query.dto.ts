import {
  cursorParts,
  encodeCursor as encodeCursorParts,
  invalidCursor,
  parsePageLimit,
  parsePrefixedUuid,
  UUID,
} from '../../common/http/request-params.js';

/** Query parameters of the /v1/memory endpoints, parsed by hand like other DTOs. */
export interface MemoryListQuery {
  limit: number;
  after: MemoryCursor | null;
}

/** A position in the newest-first order: the last item a page showed. */
export interface MemoryCursor {
  createdAt: Date;
  id: string;
}

export const MEMORY_PAGE = { default: 20, max: 100 } as const;

type Query = Record<string, unknown>;

export function parseListQuery(query: Query): MemoryListQuery {
  const limit = parsePageLimit(query, MEMORY_PAGE);
  const parts = cursorParts(query, 2);
  if (parts === null) return { limit, after: null };
  const [time, id] = parts;
  const createdAt = new Date(time);
  if (!UUID.test(id) || Number.isNaN(createdAt.getTime())) throw invalidCursor();
  return { limit, after: { createdAt, id: id.toLowerCase() } };
}

/** `mem_<uuid>` (as listed) or the bare UUID; null for anything else, which names no item. */
export function parseMemoryItemId(raw: string): string | null {
  return parsePrefixedUuid(raw, 'mem_', true);
}

/**
 * Opaque to clients: the last item's creation time and id. A position rather than an item id, so
 * a page boundary survives that item's deletion.
 */
export function encodeCursor(cursor: MemoryCursor): string {
  return encodeCursorParts([cursor.createdAt.toISOString(), cursor.id]);
}
