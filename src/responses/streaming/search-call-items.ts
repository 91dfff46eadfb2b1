import type { ToolResult } from '../../tools/server-tool.js';
import type { OutputItem } from '../../turns/output-item.types.js';
import { itemId, type ResponseRecorder } from './response-recorder.js';

// The items of the hosted searches (web_search_call, file_search_call): each is announced when its
// search starts and completed by the function returned, once the search has answered.

/**
 * A web search, announced while it runs; returns a function that completes it. With
 * `includeSources` (include `web_search_call.action.sources`) the item lists the results' URLs.
 */
export function beginWebSearch(
  recorder: ResponseRecorder,
  callId: string,
  query: string,
  includeSources: boolean,
): (result: ToolResult) => void {
  const item: Extract<OutputItem, { type: 'web_search_call' }> = {
    type: 'web_search_call',
    id: itemId('ws'),
    status: 'in_progress',
    action: { type: 'search', query },
  };
  const index = recorder.openItem(item);
  const ids = { item_id: item.id, output_index: index, call_id: callId };
  recorder.emit('response.web_search_call.in_progress', ids);
  recorder.emit('response.web_search_call.searching', { ...ids, query });
  return (result) => {
    const results = result.ok ? (result.webSearch?.results ?? []) : [];
    item.status = 'completed';
    if (includeSources)
      item.action = { ...item.action, sources: results.map(({ url }) => ({ type: 'url', url })) };
    recorder.emit('response.web_search_call.completed', { ...ids, results_count: results.length });
    recorder.emit('response.output_item.done', { output_index: index, item });
  };
}

/** A file search (docs/knowledge.md), announced while it runs; returns a function that ends it. */
export function beginFileSearch(
  recorder: ResponseRecorder,
  callId: string,
  queries: string[],
): (result: ToolResult) => void {
  const item: Extract<OutputItem, { type: 'file_search_call' }> = {
    type: 'file_search_call',
    id: itemId('fs'),
    status: 'in_progress',
    queries,
    results: null,
  };
  const index = recorder.openItem(item);
  const ids = { item_id: item.id, output_index: index, call_id: callId };
  recorder.emit('response.file_search_call.in_progress', ids);
  recorder.emit('response.file_search_call.searching', ids);
  return (result) => {
    // A failed search fails its call only: the model reads the error and the turn goes on.
    item.status = result.ok ? 'completed' : 'failed';
    if (result.ok && result.fileSearch) {
      item.results = result.fileSearch.results;
      recorder.cite(result.fileSearch.passages);
    }
    if (result.ok) recorder.emit('response.file_search_call.completed', ids);
    recorder.emit('response.output_item.done', { output_index: index, item });
  };
}
