/**
 * Splits a file's text into overlapping chunks, as OpenAI's `chunking_strategy` describes them
 * (docs/knowledge.md "Chunking"). A token is approximated by a word-piece: a run of
 * non-space characters, long runs cut every 8 characters (so a URL or a base64 blob does not
 * count as one token). Chunks end on the token budget; each keeps the whitespace of the text.
 */
export interface ChunkingStrategy {
  maxChunkSizeTokens: number;
  chunkOverlapTokens: number;
}

/** OpenAI's `auto`. */
export const AUTO_CHUNKING: ChunkingStrategy = { maxChunkSizeTokens: 800, chunkOverlapTokens: 400 };
export const STATIC_CHUNK_LIMITS = { min: 100, max: 4096 } as const;

const MAX_PIECE_CHARS = 8;

/** Token pieces of the text, each with where it starts and ends. */
function pieces(text: string): Array<{ start: number; end: number }> {
  const out: Array<{ start: number; end: number }> = [];
  const word = /\S+/g;
  for (let match = word.exec(text); match !== null; match = word.exec(text)) {
    for (let at = match.index; at < match.index + match[0].length; at += MAX_PIECE_CHARS) {
      out.push({ start: at, end: Math.min(at + MAX_PIECE_CHARS, match.index + match[0].length) });
    }
  }
  return out;
}

/** Approximate token count of a text, by the same measure as chunking. */
export function countTokens(text: string): number {
  return pieces(text).length;
}

export function chunkText(text: string, strategy: ChunkingStrategy): string[] {
  const all = pieces(text);
  if (all.length === 0) return [];
  const step = strategy.maxChunkSizeTokens - strategy.chunkOverlapTokens;
  const chunks: string[] = [];
  for (let first = 0; first < all.length; first += step) {
    const last = Math.min(first + strategy.maxChunkSizeTokens, all.length) - 1;
    chunks.push(text.slice(all[first].start, all[last].end));
    if (last === all.length - 1) break;
  }
  return chunks;
}
