/**
 * What the tests' local OpenAI-compatible embeddings servers answer: a deterministic stand-in
 * for a model, one dimension per first letter of a word, counted.
 */
export function letterVector(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) vector[word.charCodeAt(0) % dimensions] += 1;
  return vector;
}
