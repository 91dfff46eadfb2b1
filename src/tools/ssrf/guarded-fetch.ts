import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import type { OnModuleDestroy } from '@nestjs/common';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { SsrfPolicy, SsrfRefusedError } from '../../common/network/ssrf-policy.js';
import { traceHeaders } from '../../common/tracing/tracing.js';

/** The fetch signature the MCP SDK transports and the tools use. */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** How host names are resolved; replaceable so tests can resolve names of their own. */
export type ResolveAll = (hostname: string) => Promise<LookupAddress[]>;

export interface GuardedRequestInit extends RequestInit {
  /** Header names dropped when a redirect leaves the origin (authorization and cookies always are). */
  sensitiveHeaders?: readonly string[];
  /**
   * Send the request's W3C trace context (`traceparent`, `tracestate`, `baggage`). Off by
   * default: a third-party host learns nothing of the caller's traces unless its tool opts in.
   */
  traceContext?: boolean;
}

const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const ALWAYS_SENSITIVE = ['authorization', 'proxy-authorization', 'cookie'];
const TRACE_HEADERS = ['traceparent', 'tracestate', 'baggage'];

const systemResolver: ResolveAll = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    );
  });

/**
 * The one way server tools reach the network. Every connection is opened by `connect` below:
 * it resolves the host itself, refuses the connection if any address is not allowed by the
 * policy, and connects to the address it checked (no second lookup a rebinding DNS server could
 * answer differently). Redirects are followed here, hop by hop, so each hop goes through the
 * same check.
 */
export class GuardedFetch implements OnModuleDestroy {
  private readonly agent: Agent;

  constructor(policy: SsrfPolicy, resolveAll: ResolveAll = systemResolver) {
    this.agent = new Agent({ connect: guardedConnector(policy, resolveAll) });
  }

  /** A fetch with the guard, for the MCP SDK transports and the tools. */
  readonly fetch: FetchLike = (url, init) => this.request(url, init);

  async request(input: string | URL, init: GuardedRequestInit = {}): Promise<Response> {
    let url = new URL(String(input));
    let method = (init.method ?? 'GET').toUpperCase();
    let body = init.body;
    const headers = new Headers(init.headers);
    for (const name of TRACE_HEADERS) headers.delete(name);
    // W3C trace context only to hosts whose tool opted in (nothing when tracing is off).
    if (init.traceContext)
      for (const [name, value] of Object.entries(traceHeaders())) headers.set(name, value);
    const redirectMode = init.redirect ?? 'follow';
    for (let hop = 0; ; hop++) {
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        throw new SsrfRefusedError(`Refused to fetch ${url.protocol} URLs; only http and https are allowed`);
      }
      const response = await this.send(url, { ...init, method, body, headers, redirect: 'manual' });
      const location = response.headers.get('location');
      if (redirectMode === 'manual' || !REDIRECT_STATUSES.has(response.status) || !location) return response;
      await response.body?.cancel();
      if (redirectMode === 'error') throw new TypeError(`Redirected to ${location}, which was not allowed`);
      if (hop >= MAX_REDIRECTS) throw new TypeError(`More than ${MAX_REDIRECTS} redirects`);
      const next = new URL(location, url);
      if (
        response.status === 303 ||
        ((response.status === 301 || response.status === 302) && method === 'POST')
      ) {
        method = method === 'HEAD' ? 'HEAD' : 'GET';
        body = undefined;
        headers.delete('content-type');
        headers.delete('content-length');
      }
      if (next.origin !== url.origin) {
        for (const name of [...ALWAYS_SENSITIVE, ...(init.sensitiveHeaders ?? [])]) headers.delete(name);
      }
      url = next;
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  onModuleDestroy(): Promise<void> {
    return this.close();
  }

  private async send(url: URL, init: RequestInit): Promise<Response> {
    const { sensitiveHeaders: _ignored, traceContext: _trace, ...rest } = init as GuardedRequestInit;
    try {
      const response = await undiciFetch(url, {
        ...(rest as Parameters<typeof undiciFetch>[1]),
        headers: Object.fromEntries(new Headers(init.headers)),
        dispatcher: this.agent,
      });
      return response;
    } catch (error) {
      // undici wraps connection failures in "fetch failed"; the refusal itself is what matters.
      const cause = (error as { cause?: unknown }).cause;
      if (cause instanceof SsrfRefusedError) throw cause;
      throw error;
    }
  }
}

/**
 * The `connect` of an undici Agent that only opens connections `policy` allows: it resolves the
 * host itself, refuses if any address is not allowed, and connects to the address it checked
 * (no second lookup a rebinding DNS server could answer differently). Tools use it through
 * GuardedFetch; organization-written model base URLs through the upstream fetch.
 */
export function guardedConnector(
  policy: SsrfPolicy,
  resolveAll: ResolveAll = systemResolver,
): buildConnector.connector {
  const connectTo = buildConnector({ timeout: 10_000 });
  return (options, callback) => {
    const hostname = options.hostname;
    const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
    checkedAddress(policy, resolveAll, hostname, port).then(
      (address) =>
        connectTo(
          // TLS still verifies the certificate against the name the tool asked for.
          { ...options, hostname: address, servername: isIP(hostname) ? undefined : hostname },
          callback,
        ),
      (error: Error) => callback(error, null),
    );
  };
}

/** The address to connect to for `hostname:port`; throws SsrfRefusedError when any is not allowed. */
export async function checkedAddress(
  policy: SsrfPolicy,
  resolveAll: ResolveAll,
  hostname: string,
  port: number,
): Promise<string> {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (isIP(bare) !== 0) {
    policy.check(bare, port, bare);
    return bare;
  }
  let addresses: LookupAddress[];
  try {
    addresses = await resolveAll(bare);
  } catch {
    throw new SsrfRefusedError(`Could not resolve ${bare}`);
  }
  if (addresses.length === 0) throw new SsrfRefusedError(`Could not resolve ${bare}`);
  // Every address must pass: a name with one public and one private record is refused.
  for (const { address } of addresses) policy.check(bare, port, address);
  return addresses[0].address;
}

/** Reads at most `maxBytes` of a body, then stops the transfer; the rest is never downloaded. */
export async function readCappedBytes(
  response: Response,
  maxBytes: number,
): Promise<{ bytes: Buffer; truncated: boolean }> {
  if (!response.body) return { bytes: Buffer.alloc(0), truncated: false };
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const room = maxBytes - size;
    if (value.byteLength > room) {
      chunks.push(value.subarray(0, room));
      size += room;
      truncated = true;
      await reader.cancel();
      break;
    }
    chunks.push(value);
    size += value.byteLength;
  }
  return { bytes: Buffer.concat(chunks, size), truncated };
}

/** readCappedBytes as UTF-8 text. */
export async function readCapped(
  response: Response,
  maxBytes: number,
): Promise<{ text: string; truncated: boolean }> {
  const { bytes, truncated } = await readCappedBytes(response, maxBytes);
  const text = bytes.toString('utf8');
  // A cut can split a multi-byte character; drop its undecodable remains.
  return { text: truncated ? text.replace(/\uFFFD+$/, '') : text, truncated };
}
