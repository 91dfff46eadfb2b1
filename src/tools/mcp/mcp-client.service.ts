import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import type { JsonSchemaObject } from '../server-tool.js';
import { GuardedFetch, type FetchLike } from '../ssrf/guarded-fetch.js';
import { SsrfRefusedError } from '../../common/network/ssrf-policy.js';
import { ToolFailure } from '../tool-runtime.js';
import { BoundedTtlCache } from '../../common/cache/bounded-ttl-cache.js';

/** Where and how to reach one MCP server, with the credentials of this request. */
export interface McpTarget {
  /** The `tools` row id and its last change: a changed declaration never reuses old lists. */
  serverId: string;
  version: number;
  name: string;
  url: string;
  transport: 'auto' | 'streamable-http' | 'sse';
  headers: Record<string, string>;
  /** Header names holding secrets, dropped if a redirect leaves the server's origin. */
  sensitiveHeaders: string[];
  /** Sent as `Authorization: Bearer <token>`: the user's OAuth token or forwarded `x-user-token`. */
  bearerToken?: string;
  timeoutMs: number;
  /** The guard of the server's organization and author (TenantConfigPolicy); default the deployment's. */
  http?: GuardedFetch;
  /** Send the request's trace context (the server's config opted in). */
  traceContext?: boolean;
}

export interface RemoteTool {
  name: string;
  description: string;
  inputSchema: JsonSchemaObject;
}

export interface RemoteCallResult {
  isError: boolean;
  text: string;
}

type TransportKind = 'streamable-http' | 'sse';

/**
 * The SDK's client, loaded by the first MCP call: a replica whose assistants call no MCP server
 * never holds it (with its schemas, about 6 MiB of heap).
 */
let clientSdk: Promise<ClientSdk> | undefined;
type ClientSdk = Awaited<ReturnType<typeof importClientSdk>>;

async function importClientSdk() {
  // One after another: modules importing shared dependencies at once fail to link under Jest's VM.
  const client = await import('@modelcontextprotocol/sdk/client/index.js');
  const sse = await import('@modelcontextprotocol/sdk/client/sse.js');
  const streamable = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const types = await import('@modelcontextprotocol/sdk/types.js');
  return {
    Client: client.Client,
    SSEClientTransport: sse.SSEClientTransport,
    StreamableHTTPClientTransport: streamable.StreamableHTTPClientTransport,
    McpError: types.McpError,
  };
}

const CLIENT_INFO = { name: 'switchboard', version: '0.1.0' };
/** A server listing more tools than this is cut: no model can use thousands of tools. */
const MAX_LIST_PAGES = 20;

/**
 * Talks to remote MCP servers with the official SDK client: Streamable HTTP first, the older
 * HTTP+SSE transport when a server does not speak it. Each operation opens a short session
 * (initialize, one request, close), which keeps no per-user state in memory between turns.
 * Tool lists are cached per server declaration and per credential.
 */
@Injectable()
export class McpClientService {
  private readonly toolLists: BoundedTtlCache<Promise<RemoteTool[]>>;
  /** The transport that worked for a server declaration, so later sessions skip the probe. */
  private readonly workingTransport: BoundedTtlCache<TransportKind>;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly http: GuardedFetch,
  ) {
    this.toolLists = new BoundedTtlCache(config.tools.mcpToolsCacheMaxEntries, config.tools.mcpToolsCacheMs);
    this.workingTransport = new BoundedTtlCache(config.tools.mcpToolsCacheMaxEntries, 24 * 3600 * 1000);
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
    const listing = this.session(target, AbortSignal.timeout(target.timeoutMs), async (client, options) => {
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
    });
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
    return this.session(target, signal, async (client, options) => {
      const result = await client.callTool({ name, arguments: args }, undefined, options);
      return callResultText(result);
    });
  }

  private async session<T>(
    target: McpTarget,
    signal: AbortSignal,
    work: (client: Client, options: { signal: AbortSignal; timeout: number }) => Promise<T>,
  ): Promise<T> {
    const sdk = await (clientSdk ??= importClientSdk());
    const transportKey = `${target.serverId}:${target.version}`;
    const remembered = this.workingTransport.get(transportKey);
    const kinds: TransportKind[] =
      target.transport !== 'auto'
        ? [target.transport]
        : remembered
          ? [remembered]
          : ['streamable-http', 'sse'];
    let unauthorized = false;
    // Every request of the SDK goes through the guard; a 401 anywhere means the credential was refused.
    const fetch: FetchLike = async (url, init) => {
      const response = await (target.http ?? this.http).request(url, {
        ...init,
        sensitiveHeaders: target.sensitiveHeaders,
        traceContext: target.traceContext,
      });
      if (response.status === 401) unauthorized = true;
      return response;
    };
    const headers = { ...target.headers };
    if (target.bearerToken) headers.authorization = `Bearer ${target.bearerToken}`;
    const options = { signal, timeout: target.timeoutMs };

    let firstError: unknown;
    for (const [index, kind] of kinds.entries()) {
      const client = new sdk.Client(CLIENT_INFO, { capabilities: {} });
      const url = new URL(target.url);
      const transport: Transport =
        kind === 'sse'
          ? new sdk.SSEClientTransport(url, { fetch, requestInit: { headers } })
          : new sdk.StreamableHTTPClientTransport(url, { fetch, requestInit: { headers } });
      try {
        await client.connect(transport, options);
      } catch (error) {
        await client.close().catch(() => undefined);
        if (unauthorized) throw refused(target);
        firstError ??= error;
        const last = index === kinds.length - 1;
        if (last || signal.aborted || isRefusal(error)) {
          if (remembered) this.workingTransport.delete(transportKey);
          // The fallback's error hides why the first attempt failed; a network error is the clearer one.
          throw mcpFailure(sdk, target, networkErrorCode(firstError) ? firstError : error);
        }
        continue;
      }
      this.workingTransport.set(transportKey, kind);
      try {
        return await work(client, options);
      } catch (error) {
        if (unauthorized) throw refused(target);
        throw mcpFailure(sdk, target, error);
      } finally {
        await client.close().catch(() => undefined);
      }
    }
    throw new ToolFailure(`The MCP server ${target.name} could not be reached`);
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

function networkErrorCode(error: unknown): string | undefined {
  const code = ((error as { cause?: unknown }).cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

function isRefusal(error: unknown): boolean {
  return (
    error instanceof SsrfRefusedError || (error as { cause?: unknown }).cause instanceof SsrfRefusedError
  );
}

function refused(target: McpTarget): ToolFailure {
  return new ToolFailure(`The MCP server ${target.name} refused the credentials (HTTP 401)`, true);
}

/** A sentence for the model; aborts and timeouts pass through for the caller to describe. */
function mcpFailure(sdk: ClientSdk, target: McpTarget, error: unknown): unknown {
  if (error instanceof ToolFailure || error instanceof SsrfRefusedError) return error;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof SsrfRefusedError) return cause;
  const name = (error as { name?: unknown }).name;
  if (name === 'AbortError' || name === 'TimeoutError') return error;
  if (error instanceof sdk.McpError) {
    // -32001 is the SDK's request timeout.
    if (error.code === -32001) return Object.assign(new Error('timed out'), { name: 'TimeoutError' });
    return new ToolFailure(`The MCP server ${target.name} answered with an error: ${error.message}`);
  }
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'number' && code >= 400) {
    return new ToolFailure(`The MCP server ${target.name} answered HTTP ${code}`);
  }
  const errno = networkErrorCode(error);
  if (errno) return new ToolFailure(`The MCP server ${target.name} could not be reached (${errno})`);
  return new ToolFailure(`The MCP server ${target.name} could not be reached`);
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
