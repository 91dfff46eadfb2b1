import { errorCatalogueRows } from './error-meanings.js';
import { documentedRows, renderTable, withTable, type TableMarkers } from './markdown-table.js';

export const ERRORS_START = '<!-- errors:start -->';
export const ERRORS_END = '<!-- errors:end -->';
const MARKERS: TableMarkers = { start: ERRORS_START, end: ERRORS_END };

const HEADINGS = ['Code', 'HTTP status', '`error.type`', 'Meaning'];

/** The rows of the error table in docs/api.md, cell by cell. */
export function errorTableRows(): string[][] {
  return errorCatalogueRows().map((row) => [
    `\`${row.code}\``,
    String(row.status),
    `\`${row.type}\``,
    row.meaning,
  ]);
}

/** A Markdown table of the catalogue, padded as prettier pads it. */
export function renderErrorTable(): string {
  return renderTable(HEADINGS, errorTableRows());
}

/** Replaces the error table of a docs/api.md text. */
export function withErrorTable(markdown: string): string {
  return withTable(markdown, MARKERS, renderErrorTable());
}

/** The error table rows found between the markers of a docs/api.md text, cell by cell. */
export function documentedErrorRows(markdown: string): string[][] {
  return documentedRows(markdown, MARKERS);
}
