/**
 * The deterministic local embedder: no network, no model. A text's words (lower-cased, with a
 * light English suffix stripping) and their character trigrams are hashed into a fixed number of
 * dimensions with a hashed sign (the "hashing trick"), weighted by a sub-linear term frequency,
 * then L2-normalised, so cosine similarity is a dot product. It finds texts that share words and
 * word fragments (plurals, inflections, typos), not synonyms: hybrid ranking adds full-text
 * search's exact matches to it. Same text, same vector, on every replica and every release that
 * keeps `LOCAL_EMBEDDER_NAME`.
 */
export const LOCAL_EMBEDDING_DIMENSIONS = 512;
export const LOCAL_EMBEDDER_NAME = `local-hash-v1-${LOCAL_EMBEDDING_DIMENSIONS}`;

const STOP_WORDS = new Set(
  (
    'a an and are as at be by for from has have how i in is it its of on or that the this to was ' +
    'were what when where which who why will with do does did can you your we our'
  ).split(' '),
);

/** FNV-1a, 32 bits. */
function hash(text: string): number {
  let value = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    value ^= text.charCodeAt(i);
    value = Math.imul(value, 0x01000193);
  }
  return value >>> 0;
}

function stem(word: string): string {
  for (const suffix of ['ing', 'ed', 'es', 's']) {
    if (word.length > suffix.length + 3 && word.endsWith(suffix)) return word.slice(0, -suffix.length);
  }
  return word;
}

/** The words of a text that carry meaning, stemmed. */
export function contentWords(text: string): string[] {
  const words =
    text
      .toLowerCase()
      .normalize('NFKC')
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.filter((word) => !STOP_WORDS.has(word)).map(stem);
}

export function embedLocally(text: string): Float32Array {
  const counts = new Map<string, number>();
  const add = (feature: string, weight: number) => counts.set(feature, (counts.get(feature) ?? 0) + weight);
  for (const word of contentWords(text)) {
    add(`w:${word}`, 1);
    const padded = `<${word}>`;
    for (let i = 0; i + 3 <= padded.length; i++) add(`t:${padded.slice(i, i + 3)}`, 0.25);
  }
  const vector = new Float32Array(LOCAL_EMBEDDING_DIMENSIONS);
  for (const [feature, count] of counts) {
    const h = hash(feature);
    const sign = h & 0x80000000 ? -1 : 1;
    vector[h % LOCAL_EMBEDDING_DIMENSIONS] += sign * (1 + Math.log(count));
  }
  return normalise(vector);
}

export function normalise(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] /= norm;
  return vector;
}
