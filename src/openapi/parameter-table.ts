import { CREATE_RESPONSE_FIELDS } from '../responses/request-schema/create-response.fields.js';
import { parameterRows } from '../common/request-schema/request-schema.js';
import { documentedRows, renderTable, withTable, type TableMarkers } from './markdown-table.js';

/** The table of POST /v1/responses fields in docs/api.md, derived from the request's one schema. */
const MARKERS: TableMarkers = {
  start: '<!-- request-parameters:start -->',
  end: '<!-- request-parameters:end -->',
};

const HEADINGS = ['Field', 'Type', 'Default', 'Error', 'Meaning'];

export function parameterTableRows(): string[][] {
  return parameterRows(CREATE_RESPONSE_FIELDS);
}

export function withParameterTable(markdown: string): string {
  return withTable(markdown, MARKERS, renderTable(HEADINGS, parameterTableRows()));
}

export function documentedParameterRows(markdown: string): string[][] {
  return documentedRows(markdown, MARKERS);
}
