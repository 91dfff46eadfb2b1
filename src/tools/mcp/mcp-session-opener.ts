import { Inject, Injectable } from '@nestjs/common';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { BoundedTtlCache } from '../../common/cache/bounded-ttl-cache.js';
import { SsrfRefusedError } from '../../common/network/ssrf-policy.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { GuardedFetch, type FetchLike } from '../ssrf/guarded-fetch.js';
import { ToolFailure } from '../tool-runtime.js';

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

/**
 * Opens one short session with a remote MCP server (initialize, the caller's work, close) with the
 * official SDK client: Streamable HTTP first, the older HTTP+SSE transport when a server does not
 * speak it, the transport that worked remembered per server declaration. Every request goes
 * through the SSRF guard, and what fails is turned into a sentence for the model.
 */
@Injectable()
export class McpSessionOpener {
  /** The transport that worked for a server declaration, so later sessions skip the probe. */
  private readonly workingTransport: BoundedTtlCache<TransportKind>;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly http: GuardedFetch,
  ) {
    this.workingTransport = new BoundedTtlCache(config.tools.mcpToolsCacheMaxEntries, 24 * 3600 * 1000);
  }

  /** Runs `work` in a session with the server; `signal` and the server's timeout bound it. */
  async open<T>(
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
