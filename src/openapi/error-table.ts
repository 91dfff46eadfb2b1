import { errorCatalogueRows } from './error-meanings.js';

export const ERRORS_START = '<!-- errors:start -->';
export const ERRORS_END = '<!-- errors:end -->';

const HEADINGS = ['Code', 'HTTP status', '`error.type`', 'Meaning'];

/** The rows of the error table in docs/api.md, cell by cell. */
export function errorTableRows(): string[][] {
  return errorCatalogueRows().map((row) => [
    `\`${row.code}\``,
    String(row.status),
    `\`${row.type}\``,
    row.meaning.replaceAll('|', '\\|'),
  ]);
}

/** A Markdown table of the catalogue, padded as prettier pads it. */
export function renderErrorTable(): string {
  const rows = [HEADINGS, ...errorTableRows()];
  const widths = HEADINGS.map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  const line = (cells: string[]) =>
    `| ${cells.map((cell, column) => cell.padEnd(widths[column])).join(' | ')} |`;
  const separator = `| ${widths.map((width) => '-'.repeat(width)).join(' | ')} |`;
  return [line(HEADINGS), separator, ...rows.slice(1).map(line)].join('\n');
}

/** Replaces what lies between the markers; fails when they are missing, rather than losing the table. */
export function withErrorTable(markdown: string): string {
  const start = markdown.indexOf(ERRORS_START);
  const end = markdown.indexOf(ERRORS_END);
  if (start === -1 || end === -1 || end < start) {
    throw new Error(`docs/api.md must contain ${ERRORS_START} and then ${ERRORS_END}`);
  }
  return `${markdown.slice(0, start + ERRORS_START.length)}\n\n${renderErrorTable()}\n\n${markdown.slice(end)}`;
}

/** The table rows found between the markers of a docs/api.md text, cell by cell. */
export function documentedErrorRows(markdown: string): string[][] {
  const start = markdown.indexOf(ERRORS_START);
  const end = markdown.indexOf(ERRORS_END);
  if (start === -1 || end < start) return [];
  return markdown
    .slice(start + ERRORS_START.length, end)
    .split('\n')
    .filter((line) => line.trim().startsWith('|'))
    .slice(2)
    .map((line) =>
      line
        .trim()
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
}
