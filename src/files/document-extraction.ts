import type { TextStatus } from './entities/stored-file.entity.js';

/** The same shape as text-extraction.ts's ExtractedText (which imports this module). */
interface ExtractedText {
  status: TextStatus;
  text: string | null;
}

/**
 * The text of PDF and DOCX files, through maintained pure-JavaScript libraries (unpdf, a
 * packaging of Mozilla's pdf.js for servers; mammoth for Word's Office Open XML). They are
 * loaded on first use, so a replica that never sees a PDF never loads pdf.js.
 *
 * A document that cannot be parsed (damaged, encrypted, not what its name says) has no text:
 * the file is still stored and served, its text is `unavailable`. Parsing is bounded in time:
 * a hostile document that makes a parser spin is given up after `DOCUMENT_PARSE_TIMEOUT_MS`.
 */
export type DocumentKind = 'pdf' | 'docx';

const DOCUMENT_PARSE_TIMEOUT_MS = 20_000;
const UNAVAILABLE: ExtractedText = { status: 'unavailable', text: null };

export function documentKindOf(filename: string, mediaType: string): DocumentKind | null {
  const type = mediaType.split(';', 1)[0].trim().toLowerCase();
  const extension = filename.includes('.') ? filename.slice(filename.lastIndexOf('.') + 1).toLowerCase() : '';
  if (type === 'application/pdf' || extension === 'pdf') return 'pdf';
  if (
    type === 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' ||
    extension === 'docx'
  ) {
    return 'docx';
  }
  return null;
}

export async function extractDocumentText(kind: DocumentKind, content: Buffer): Promise<ExtractedText> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), DOCUMENT_PARSE_TIMEOUT_MS);
    timer.unref();
  });
  try {
    const text = await Promise.race([kind === 'pdf' ? pdfText(content) : docxText(content), timeout]);
    return text === null ? UNAVAILABLE : usable(text);
  } catch {
    return UNAVAILABLE; // damaged, encrypted, or not the format its name says
  } finally {
    clearTimeout(timer);
  }
}

/** What is used of pdf.js's document (unpdf's own type names a canvas package that is not installed). */
interface PdfDocument {
  destroy(): Promise<void>;
}

async function pdfText(content: Buffer): Promise<string> {
  const { getDocumentProxy, extractText } = await import('unpdf');
  // pdf.js takes ownership of (and detaches) the array it is given: hand it a copy. The fonts'
  // code is never evaluated, and only errors are logged, never pdf.js's chatter.
  const pdf = (await getDocumentProxy(new Uint8Array(content), {
    isEvalSupported: false,
    verbosity: 0,
  })) as unknown as PdfDocument;
  try {
    const { text } = await extractText(pdf, {
      mergePages: false,
    });
    return text.map((page) => page.trim()).join('\n\n');
  } finally {
    await pdf.destroy();
  }
}

async function docxText(content: Buffer): Promise<string> {
  const mammoth = await import('mammoth');
  const { value } = await mammoth.extractRawText({ buffer: content });
  return value;
}

/** Text as it can be stored (no NUL, PostgreSQL refuses it) and worth keeping (not blank). */
function usable(text: string): ExtractedText {
  const cleaned = text
    .split('\u0000')
    .join('')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return cleaned === '' ? UNAVAILABLE : { status: 'extracted', text: cleaned };
}
