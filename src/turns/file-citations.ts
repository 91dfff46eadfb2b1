/** A passage the file_search tool gave the model in this turn. */
export interface SearchedPassage {
  file_id: string;
  filename: string;
  text: string;
}

/** OpenAI's `file_citation` annotation of an `output_text` part. */
export interface FileCitation {
  type: 'file_citation';
  /** The character offset in the text just after the place where the answer cites the file. */
  index: number;
  file_id: string;
  filename: string;
}

/** How many consecutive words of a passage make a quote of it. */
export const QUOTE_WORDS = 6;

const WORD = /[\p{L}\p{N}]+/gu;

interface Word {
  word: string;
  end: number;
}

function wordsOf(text: string): Word[] {
  return [...text.matchAll(WORD)].map((match) => ({
    word: match[0].toLowerCase(),
    end: match.index + match[0].length,
  }));
}

/** The end of the first case-insensitive occurrence of `needle`, or undefined. */
function mention(lowerAnswer: string, needle: string): number | undefined {
  const at = needle.length === 0 ? -1 : lowerAnswer.indexOf(needle.toLowerCase());
  return at < 0 ? undefined : at + needle.length;
}

/** The end of the answer's first run of QUOTE_WORDS words that is also a run of a passage. */
function quote(answerWords: Word[], passages: string[]): number | undefined {
  const runs = new Set<string>();
  for (const passage of passages) {
    const words = wordsOf(passage).map((word) => word.word);
    for (let i = 0; i + QUOTE_WORDS <= words.length; i++) runs.add(words.slice(i, i + QUOTE_WORDS).join(' '));
  }
  if (runs.size === 0) return undefined;
  for (let i = 0; i + QUOTE_WORDS <= answerWords.length; i++) {
    const run = answerWords.slice(i, i + QUOTE_WORDS);
    if (runs.has(run.map((word) => word.word).join(' '))) return run[QUOTE_WORDS - 1].end;
  }
  return undefined;
}

/**
 * The files an answer cites, by a deterministic rule (docs/knowledge.md, "Citations"): of the files
 * whose passages file_search gave the model in this turn, those the answer names (file name or
 * file id, in any case, as citation markers such as `[handbook.md]` do) or quotes (QUOTE_WORDS
 * consecutive words of one of its passages, compared word by word without case or punctuation).
 * One annotation per file, at the first such place, in the order of the text.
 */
export function fileCitations(answer: string, passages: SearchedPassage[]): FileCitation[] {
  if (answer.length === 0 || passages.length === 0) return [];
  const files = new Map<string, { filename: string; texts: string[] }>();
  for (const passage of passages) {
    const file = files.get(passage.file_id) ?? { filename: passage.filename, texts: [] };
    file.texts.push(passage.text);
    files.set(passage.file_id, file);
  }
  const lowerAnswer = answer.toLowerCase();
  const answerWords = wordsOf(answer);
  const citations: FileCitation[] = [];
  for (const [fileId, { filename, texts }] of files) {
    const places = [
      mention(lowerAnswer, filename),
      mention(lowerAnswer, fileId),
      quote(answerWords, texts),
    ].filter((place): place is number => place !== undefined);
    if (places.length > 0) {
      citations.push({ type: 'file_citation', index: Math.min(...places), file_id: fileId, filename });
    }
  }
  // Stable: files cited at the same place keep the order in which the search gave them.
  return citations.sort((a, b) => a.index - b.index);
}
