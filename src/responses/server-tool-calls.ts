import type { Attributes } from '@opentelemetry/api';
import { inSpan } from '../common/tracing/tracing.js';
import type { ChatMessage } from '../llm/llm.types.js';
import type { ServerTool, ToolExecutionContext, ToolResult } from '../tools/server-tool.js';
import { itemId, type ResponseRecorder } from './streaming/response-recorder.js';
import { beginFileSearch, beginWebSearch } from './streaming/search-call-items.js';

export interface CollectedCall {
  id: string;
  name: string;
  arguments: string;
  kind: 'client' | 'server' | 'handover';
  handle?: number;
}

/**
 * Runs one iteration's server tools concurrently. Web and file searches are announced before they
 * start and completed in order, so their events read as the spec describes.
 */
export async function runServerTools(
  calls: CollectedCall[],
  tools: ServerTool[],
  context: ToolExecutionContext,
  recorder: ResponseRecorder,
  includeWebSearchSources = false,
): Promise<ToolResult[]> {
  const started = calls.map((call) => {
    const tool = tools.find((candidate) => candidate.definition.name === call.name);
    const args = parseArguments(call.arguments);
    const query = typeof args?.query === 'string' ? args.query : '';
    let complete: ((result: ToolResult) => void) | undefined;
    if (tool?.kind === 'web_search' && args) {
      complete = beginWebSearch(recorder, call.id, query, includeWebSearchSources);
    } else if (tool?.kind === 'file_search' && args) {
      complete = beginFileSearch(recorder, call.id, [query]);
    }
    return { tool, args, complete };
  });
  const results = await Promise.all(
    started.map(({ tool, args }, index): Promise<ToolResult> => {
      if (!tool) return Promise.resolve({ ok: false, error: `Unknown tool "${calls[index].name}"` });
      if (!args) return Promise.resolve({ ok: false, error: 'The tool arguments were not a JSON object' });
      return inSpan(`execute_tool ${tool.definition.name}`, toolAttributes(tool, calls[index].id), () =>
        tool.execute(args, context),
      );
    }),
  );
  for (const [index, { complete }] of started.entries()) {
    const result = results[index];
    if (complete) complete(result);
  }
  return results;
}

/**
 * The results into the turn's transcript, in the order of the calls; a plugin's sign-in that a
 * result asks for becomes an `oauth_required` item once per turn (`announced` holds the turn's).
 */
export function keepToolResults(
  calls: CollectedCall[],
  results: ToolResult[],
  transcript: ChatMessage[],
  recorder: ResponseRecorder,
  announced: Set<string>,
): void {
  for (const [index, call] of calls.entries()) {
    const result = results[index];
    transcript.push({ role: 'tool', tool_call_id: call.id, content: toolMessage(result) });
    const signIn = result.ok ? undefined : result.oauthRequired;
    if (signIn && !announced.has(`${signIn.pluginId}:${signIn.providerId}`)) {
      announced.add(`${signIn.pluginId}:${signIn.providerId}`);
      recorder.addItem({
        type: 'oauth_required',
        id: itemId('oar'),
        plugin_id: signIn.pluginId,
        plugin_name: signIn.pluginName,
        provider_id: signIn.providerId,
        required_scopes: signIn.requiredScopes,
        auth_url: signIn.authUrl,
      });
    }
  }
}

export function parseArguments(raw: string): Record<string, unknown> | null {
  try {
    const parsed: unknown = raw.trim() ? JSON.parse(raw) : {};
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** What the model reads back from a server tool: its output, or a readable error. */
function toolMessage(result: ToolResult): string {
  return result.ok ? result.output : JSON.stringify({ error: result.error });
}

function toolAttributes(tool: ServerTool, callId: string): Attributes {
  return {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': tool.definition.name,
    'gen_ai.tool.call.id': callId,
    'gen_ai.tool.type': 'extension',
  };
}
