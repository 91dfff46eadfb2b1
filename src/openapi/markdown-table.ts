/** Generated Markdown tables of docs/api.md: each sits between a start and an end marker. */
export interface TableMarkers {
  start: string;
  end: string;
}

const escape = (cell: string): string => cell.replaceAll('|', '\\|');

/** A Markdown table, padded as prettier pads it. */
export function renderTable(headings: readonly string[], body: readonly (readonly string[])[]): string {
  const rows = [headings, ...body.map((row) => row.map(escape))];
  const widths = headings.map((_, column) => Math.max(3, ...rows.map((row) => row[column].length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, column) => cell.padEnd(widths[column])).join(' | ')} |`;
  const separator = `| ${widths.map((width) => '-'.repeat(width)).join(' | ')} |`;
  return [line(headings), separator, ...rows.slice(1).map(line)].join('\n');
}

/** Replaces what lies between the markers; fails when they are missing, rather than losing the table. */
export function withTable(markdown: string, markers: TableMarkers, table: string): string {
  const start = markdown.indexOf(markers.start);
  const end = markdown.indexOf(markers.end);
  if (start === -1 || end === -1 || end < start) {
    throw new Error(`docs/api.md must contain ${markers.start} and then ${markers.end}`);
  }
  return `${markdown.slice(0, start + markers.start.length)}\n\n${table}\n\n${markdown.slice(end)}`;
}

/** The table rows found between the markers of a Markdown text, cell by cell (unescaped). */
export function documentedRows(markdown: string, markers: TableMarkers): string[][] {
  const start = markdown.indexOf(markers.start);
  const end = markdown.indexOf(markers.end);
  if (start === -1 || end < start) return [];
  return markdown
    .slice(start + markers.start.length, end)
    .split('\n')
    .filter((line) => line.trim().startsWith('|'))
    .slice(2)
    .map((line) =>
      line
        .trim()
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim().replaceAll('\\|', '|')),
    );
}
