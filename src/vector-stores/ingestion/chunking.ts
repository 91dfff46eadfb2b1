import { tokenPieces } from '../embeddings/token-count.js';

/**
 * Splits a file's text into overlapping chunks, as OpenAI's `chunking_strategy` describes them
 * (docs/knowledge.md "Chunking"), by the service's token measure (a word-piece, see
 * token-count.ts). Chunks end on the token budget; each keeps the whitespace of the text.
 */
export interface ChunkingStrategy {
  maxChunkSizeTokens: number;
  chunkOverlapTokens: number;
}

/** OpenAI's `auto`. */
export const AUTO_CHUNKING: ChunkingStrategy = { maxChunkSizeTokens: 800, chunkOverlapTokens: 400 };
export const STATIC_CHUNK_LIMITS = { min: 100, max: 4096 } as const;

export function chunkText(text: string, strategy: ChunkingStrategy): string[] {
  const all = tokenPieces(text);
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
