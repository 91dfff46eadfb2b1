import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import type { JsonSchemaObject } from '../server-tool.js';
import { BoundedTtlCache } from '../../common/cache/bounded-ttl-cache.js';
import { McpSessionOpener, type McpTarget } from './mcp-session-opener.js';

export interface RemoteTool {
  name: string;
  description: string;
  inputSchema: JsonSchemaObject;
}

export interface RemoteCallResult {
  isError: boolean;
  text: string;
}

/** A server listing more tools than this is cut: no model can use thousands of tools. */
const MAX_LIST_PAGES = 20;

/**
 * Talks to remote MCP servers: lists their tools and calls them. Each operation opens a short
 * session (McpSessionOpener), which keeps no per-user state in memory between turns. Tool lists
 * are cached per server declaration and per credential.
 */
@Injectable()
export class McpClientService {
  private readonly toolLists: BoundedTtlCache<Promise<RemoteTool[]>>;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly sessions: McpSessionOpener,
  ) {
    this.toolLists = new BoundedTtlCache(config.tools.mcpToolsCacheMaxEntries, config.tools.mcpToolsCacheMs);
  }

  /** The server's tools, from the cache when a list for this declaration and credential is fresh. */
  listTools(target: McpTarget, signal: AbortSignal): Promise<RemoteTool[]> {
    // Lists can differ per user (permissions), so a credential never sees another's list.
    const credential = target.bearerToken
      ? createHash('sha256').update(target.bearerToken).digest('hex')
      : '-';
    const key = `${target.serverId}:${target.version}:${credential}`;
    const cached = this.toolLists.get(key);
    if (cached) return untilAborted(cached, signal);
    // Shared by every request that asks meanwhile, so it is bounded by the server's timeout,
    // not by the signal of the request that happened to start it.
    const listing = this.sessions.open(
      target,
      AbortSignal.timeout(target.timeoutMs),
      async (client, options) => {
        const tools: RemoteTool[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < MAX_LIST_PAGES; page++) {
          const result = await client.listTools(cursor ? { cursor } : undefined, options);
          for (const tool of result.tools) {
            tools.push({
              name: tool.name,
              description: tool.description ?? tool.title ?? '',
              inputSchema: { ...tool.inputSchema, type: 'object' },
            });
          }
          cursor = result.nextCursor;
          if (!cursor) break;
        }
        return tools;
      },
    );
    this.toolLists.set(key, listing);
    // Failures are not remembered: the next turn tries again.
    listing.catch(() => this.toolLists.delete(key));
    return untilAborted(listing, signal);
  }

  callTool(
    target: McpTarget,
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<RemoteCallResult> {
    return this.sessions.open(target, signal, async (client, options) => {
      const result = await client.callTool({ name, arguments: args }, undefined, options);
      return callResultText(result);
    });
  }
}

/** `work`, or the signal's reason as soon as it aborts (the shared work carries on). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/** What the model reads of a tool call: its text parts, with other content named, not inlined. */
export function callResultText(result: Record<string, unknown>): RemoteCallResult {
  if ('toolResult' in result) return { isError: false, text: JSON.stringify(result.toolResult) };
  const parts = Array.isArray(result.content) ? (result.content as Record<string, unknown>[]) : [];
  const texts = parts.map((part) => {
    if (part.type === 'text' && typeof part.text === 'string') return part.text;
    const resource = part.resource as { text?: unknown; uri?: unknown } | undefined;
    if (part.type === 'resource' && typeof resource?.text === 'string') return resource.text;
    if (part.type === 'resource_link' && typeof part.uri === 'string') return `[resource ${part.uri}]`;
    return `[${String(part.type)} content omitted]`;
  });
  if (texts.length === 0 && result.structuredContent !== undefined)
    texts.push(JSON.stringify(result.structuredContent));
  return { isError: result.isError === true, text: texts.join('\n') };
}
