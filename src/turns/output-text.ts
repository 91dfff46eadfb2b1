import type { OutputItem } from './output-item.types.js';

/**
 * A reply's `output_text`: the text of every `message` item, concatenated, as the Response object
 * shows it. The stream's recorder builds it here, and the store reads it from `output` when the
 * row's `output_text` column is empty (docs/benchmarks.md, round "textonce").
 */
export function outputTextOf(output: readonly OutputItem[]): string {
  return output
    .flatMap((item) => (item.type === 'message' ? item.content.map((part) => part.text) : []))
    .join('');
}
