import { documentKindOf, extractDocumentText } from './document-extraction.js';
import type { TextStatus } from './entities/stored-file.entity.js';

/**
 * The text of an uploaded file, kept beside it for later chunking (docs/knowledge.md). Plain
 * text, Markdown and the other text formats are stored as they are; HTML is reduced to its
 * visible text by a single linear pass; PDF and DOCX through their parsers
 * (document-extraction.ts). Anything else binary is kept, its text `unavailable`.
 */
export interface ExtractedText {
  status: TextStatus;
  text: string | null;
}

type Kind = 'text' | 'html';

const KIND_BY_EXTENSION: Record<string, Kind> = {
  txt: 'text',
  text: 'text',
  md: 'text',
  markdown: 'text',
  csv: 'text',
  tsv: 'text',
  json: 'text',
  jsonl: 'text',
  xml: 'text',
  yaml: 'text',
  yml: 'text',
  log: 'text',
  html: 'html',
  htm: 'html',
  xhtml: 'html',
};

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
const UNAVAILABLE: ExtractedText = { status: 'unavailable', text: null };

function kindOf(filename: string, mediaType: string): Kind | null {
  const type = mediaType.split(';', 1)[0].trim().toLowerCase();
  if (type === 'text/html' || type === 'application/xhtml+xml') return 'html';
  const dot = filename.lastIndexOf('.');
  const byExtension = dot === -1 ? undefined : KIND_BY_EXTENSION[filename.slice(dot + 1).toLowerCase()];
  if (byExtension !== undefined) return byExtension;
  if (type.startsWith('text/') || type === 'application/json' || type === 'application/xml') return 'text';
  return null;
}

/** The text of any uploaded file: documents through their parsers, text formats as below. */
export async function extractFileText(
  filename: string,
  mediaType: string,
  content: Buffer,
): Promise<ExtractedText> {
  const document = documentKindOf(filename, mediaType);
  if (document !== null) return extractDocumentText(document, content);
  return extractText(filename, mediaType, content);
}

export function extractText(filename: string, mediaType: string, content: Buffer): ExtractedText {
  const kind = kindOf(filename, mediaType);
  if (kind === null) return UNAVAILABLE;
  let decoded: string;
  try {
    decoded = UTF8.decode(content);
  } catch {
    return UNAVAILABLE; // not UTF-8: binary under a text name, or a legacy encoding
  }
  // NUL cannot be stored as PostgreSQL text, and marks binary content anyway.
  if (decoded.includes('\u0000')) return UNAVAILABLE;
  return { status: 'extracted', text: kind === 'html' ? htmlToText(decoded) : decoded };
}

/** Elements whose content is never visible text. */
const HIDDEN = new Set(['script', 'style', 'noscript', 'template', 'head', 'svg', 'iframe', 'object']);
/** Elements that end a line of text. */
const BLOCK = new Set([
  'address', 'article', 'aside', 'blockquote', 'br', 'dd', 'div', 'dl', 'dt', 'figcaption', 'figure',
  'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav', 'ol',
  'p', 'pre', 'section', 'table', 'td', 'th', 'title', 'tr', 'ul',
]); // prettier-ignore

const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
};

/**
 * The visible text of an HTML document, in one left-to-right pass with no backtracking (each
 * `indexOf` starts where the previous one stopped): comments, tags and the content of hidden
 * elements go, block elements end lines, the common entities are decoded.
 */
export function htmlToText(html: string): string {
  const out: string[] = [];
  let at = 0;
  while (at < html.length) {
    const open = html.indexOf('<', at);
    const textEnd = open === -1 ? html.length : open;
    if (textEnd > at) out.push(decodeEntities(html.slice(at, textEnd)));
    if (open === -1) break;
    if (html.startsWith('<!--', open)) {
      const close = html.indexOf('-->', open + 4);
      at = close === -1 ? html.length : close + 3;
      continue;
    }
    const name = tagName(html, open + 1);
    if (name === null) {
      out.push('<'); // a lone '<' in text
      at = open + 1;
      continue;
    }
    at = tagEnd(html, open + 1);
    const closing = html[open + 1] === '/';
    if (!closing && html[at - 2] !== '/' && HIDDEN.has(name)) at = hiddenEnd(html, name, at);
    else if (BLOCK.has(name)) out.push('\n');
  }
  return tidy(out.join(''));
}

/** Just past `</name>` (any case), the end of a hidden element's content; the end of the text without one. */
function hiddenEnd(html: string, name: string, from: number): number {
  // The name is one of HIDDEN (letters only) and the pattern has no nested repetition: linear.
  const closer = new RegExp(`</${name}\\s*>`, 'gi');
  closer.lastIndex = from;
  const match = closer.exec(html);
  return match === null ? html.length : match.index + match[0].length;
}

/** `<name` or `</name` at `from` (just after '<'), lower-cased; null when it is not a tag. */
function tagName(html: string, from: number): string | null {
  let start = from;
  if (html[start] === '/') start++;
  if (html[start] === '!' || html[start] === '?') return '!';
  let end = start;
  while (end < html.length && /[A-Za-z0-9:-]/.test(html[end])) end++;
  if (end === start || !/[A-Za-z]/.test(html[start])) return null;
  return html.slice(start, end).toLowerCase();
}

/** Just past the '>' that ends the tag opened before `from`, skipping quoted attribute values. */
function tagEnd(html: string, from: number): number {
  let quote: string | null = null;
  for (let i = from; i < html.length; i++) {
    const char = html[i];
    if (quote !== null) {
      if (char === quote) quote = null;
    } else if (char === '"' || char === "'") {
      quote = char;
    } else if (char === '>') {
      return i + 1;
    }
  }
  return html.length;
}

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,6});/gi, (whole, body: string) => {
    if (body[0] !== '#') return NAMED_ENTITIES[body.toLowerCase()] ?? whole;
    const code =
      body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
    const valid = code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff);
    return valid ? String.fromCodePoint(code) : '\uFFFD';
  });
}

/** Runs of spaces become one, lines are trimmed, at most one blank line in a row. */
function tidy(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/[ \t\r\f\v\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
