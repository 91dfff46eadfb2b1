import type { ServerToolDefinition, ToolResult } from '../server-tool.js';
import { ToolFailure } from '../tool-runtime.js';
import type { WebSearchProvider } from './web-search.provider.js';

export function webSearchDefinition(name: string, description: string): ServerToolDefinition {
  return {
    name,
    description:
      description ||
      'Search the web. Returns the top results with their titles, URLs and snippets; cite the URLs you use.',
    parameters: {
      type: 'object',
      properties: { query: { type: 'string', description: 'What to search for' } },
      required: ['query'],
    },
  };
}

/** Runs one search; the model reads `{query, results:[{title,url,snippet}]}`. */
export async function runWebSearch(
  provider: WebSearchProvider,
  args: Record<string, unknown>,
  maxResults: number,
  signal: AbortSignal,
): Promise<ToolResult> {
  const query = typeof args.query === 'string' ? args.query.trim() : '';
  if (!query) throw new ToolFailure('The "query" argument must be a non-empty string');
  const results = await provider.search(query, { maxResults, signal });
  return {
    ok: true,
    output: JSON.stringify({ query, results }),
    webSearch: { query, results },
  };
}
