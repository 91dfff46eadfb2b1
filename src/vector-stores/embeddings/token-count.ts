/**
 * The service's token measure, with no tokenizer loaded: a token is a word-piece, a run of
 * non-space characters, long runs cut every 8 characters (so a URL or a base64 blob does not
 * count as one token). Chunking cuts by it (docs/knowledge.md "Chunking") and embeddings usage
 * counts by it where the endpoint reports no usage, and for the local embedder (docs/usage.md).
 */
const MAX_PIECE_CHARS = 8;

/** Token pieces of the text, each with where it starts and ends. */
export function tokenPieces(text: string): Array<{ start: number; end: number }> {
  const out: Array<{ start: number; end: number }> = [];
  const word = /\S+/g;
  for (let match = word.exec(text); match !== null; match = word.exec(text)) {
    for (let at = match.index; at < match.index + match[0].length; at += MAX_PIECE_CHARS) {
      out.push({ start: at, end: Math.min(at + MAX_PIECE_CHARS, match.index + match[0].length) });
    }
  }
  return out;
}

/** Approximate token count of a text. */
export function countTokens(text: string): number {
  return tokenPieces(text).length;
}
