import type { Readable } from 'node:stream';
import { Agent, request, type buildConnector, type Dispatcher } from 'undici';

/** undici's Node stream of an answer's body. */
export type UpstreamBodyStream = Dispatcher.ResponseData['body'];

/** A `fetch` over a connection pool of its own, and how to close that pool. */
export type UpstreamFetch = typeof fetch & { close(): Promise<void> };

/** The body of a successful upstream answer as undici's Node stream, keyed by the Response the SDK saw. */
const rawBodies = new WeakMap<Response, UpstreamBodyStream>();

/**
 * A `fetch` for the openai SDK on undici's `request` over one keep-alive pool per upstream. The
 * global fetch wraps each request and its body in WHATWG objects (Request, Headers, a byte
 * stream read one promise per network read); here the SDK gets a bodiless Response for a
 * success (its headers cut to `SUCCESS_HEADERS`) and the turn reads the Node stream behind it
 * (`upstreamBody`). Error answers carry their text and all their headers, so the SDK builds its
 * APIError (status, code, param) as it always did.
 */
export function upstreamFetch(connect?: buildConnector.connector): UpstreamFetch {
  // `connect`: the SSRF guard of an organization-written base URL (every connection checked).
  const dispatcher = new Agent(connect ? { connect } : {});
  const send = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const bytes = requestBytes(init?.body);
    const { statusCode, headers, body } = await request(url, {
      dispatcher,
      method: (init?.method ?? 'GET') as 'POST',
      // Its length stated, the body goes out as one write, as a buffer would (the same bytes).
      headers: sentHeaders(init?.headers, bytes?.byteLength),
      // An iterable body is documented (docs/api/Dispatcher.md) but missing from undici's types.
      // Any other kind of body (never sent by the SDK's JSON calls) goes to undici as it came.
      body: bytes
        ? (new BodyOnce(bytes) as unknown as Readable)
        : (init?.body as Readable | null | undefined),
      signal: init?.signal ?? undefined,
    });
    if (statusCode < 200 || statusCode >= 300) {
      // All of them: the SDK's APIError carries them, and the retry reads `retry-after(-ms)`.
      return new Response(await body.text(), { status: statusCode, headers: responseHeaders(headers) });
    }
    const response = new Response(null, {
      status: statusCode,
      headers: responseHeaders(headers, SUCCESS_HEADERS),
    });
    // 204 and 205 have no body, as the global fetch would say (the turn treats that as a failure).
    if (statusCode === 204 || statusCode === 205) await body.dump();
    else rawBodies.set(response, body);
    return response;
  };
  // Requests in flight keep their connections: close() lets them finish.
  return Object.assign(send, { close: () => dispatcher.close() });
}

type AnswerHeaders = Dispatcher.ResponseData['headers'];

/**
 * A plain record of the answer's headers (`only` those when given): the Response makes its own
 * Headers from it (a Headers given here would be one more object, iterated and sorted to be
 * copied). No prototype: a header named `__proto__` is kept as a header, not taken as one.
 */
function responseHeaders(headers: AnswerHeaders, only?: readonly string[]): Record<string, string> {
  const record = Object.create(null) as Record<string, string>;
  for (const name of only ?? Object.keys(headers)) {
    const value = headers[name];
    if (value !== undefined) record[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return record;
}

/**
 * The headers a successful answer's Response keeps. Nothing of ours reads a success's headers
 * (the turn takes the body stream), but the SDK copies and walks every one of them per call:
 * it builds the Response's Headers, spreads them into a list for its log line's request id and
 * again into the details of its debug log, even with logging off. OpenAI answers with about
 * twenty-five (rate limits, processing time, Cloudflare's); the SDK's log needs only the request id.
 */
const SUCCESS_HEADERS = ['content-type', 'x-request-id'] as const;

const encoder = new TextEncoder();

/**
 * The request body as bytes of its own. Given a string, undici makes it a Buffer, and one under
 * 4 KiB is a slice of Node's shared 8 KiB pool: the request holds it for the whole answer, so each
 * open stream would keep a whole pool slab alive (~5 KiB per stream measured at 1,000 streams).
 */
function requestBytes(body: RequestInit['body']): Uint8Array | undefined {
  if (typeof body === 'string') return encoder.encode(body);
  return body instanceof Uint8Array ? body : undefined;
}

/**
 * The headers (any form `fetch` takes) as undici's flat name, value list, without
 * UNSENT_SDK_HEADERS, and with the body's length when there is a body.
 */
function sentHeaders(headers: RequestInit['headers'], length: number | undefined): string[] {
  const flat: string[] = [];
  // The SDK passes a Headers: read as it is (its names lowercase, duplicates combined), not
  // copied into another one first; `forEach` hands out its pairs without an iterator result and
  // a new [name, value] array per header.
  const list = headers instanceof Headers ? headers : new Headers(headers);
  list.forEach((value, name) => {
    if (name !== 'content-length' && !UNSENT_SDK_HEADERS.has(name)) flat.push(name, value);
  });
  if (length !== undefined) flat.push('content-length', String(length));
  return flat;
}

/**
 * Headers the SDK adds to every request that are not sent upstream. `x-stainless-timeout` states
 * the SDK's timeout, which is not ours (our deadlines are upstream-deadlines.ts's; the SDK's is
 * set out of their way), and `x-stainless-retry-count` is 0 on each of our own retries (the SDK
 * never retries here): both would tell the upstream something false. The other four describe the
 * gateway's machine (OS, CPU, Node.js version) to every upstream, organization-written ones
 * included, which need none of it. `x-stainless-lang` and `-package-version` stay: like the
 * User-Agent they name the client library, which a gateway may go by (as ours does on the
 * Responses API). Dropped here rather than by `defaultHeaders: { name: null }` (the SDK's way),
 * which costs the SDK's header merge more per call than the headers left out save.
 */
const UNSENT_SDK_HEADERS: ReadonlySet<string> = new Set([
  'x-stainless-timeout',
  'x-stainless-retry-count',
  'x-stainless-os',
  'x-stainless-arch',
  'x-stainless-runtime',
  'x-stainless-runtime-version',
]);

/**
 * `fetch` with UNSENT_SDK_HEADERS taken out of each request: for an SDK client on a fetch of its
 * own (the embedders', SSRF-guarded), off the turn path.
 */
export function withoutUnsentSdkHeaders(fetch: typeof globalThis.fetch): typeof globalThis.fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    for (const name of UNSENT_SDK_HEADERS) headers.delete(name);
    return fetch(input, { ...init, headers });
  };
}

/**
 * The request body, handed out once. undici's request keeps the body it was given until the
 * answer ends, and a streamed answer lasts minutes: given bytes, each open stream would hold its
 * whole prompt as bytes the whole time. Given this, undici writes the bytes and is left with an
 * empty iterable (undici does not retry a request whose body it has read).
 */
class BodyOnce implements IterableIterator<Uint8Array> {
  constructor(private bytes: Uint8Array | undefined) {}

  [Symbol.iterator](): this {
    return this;
  }

  next(): IteratorResult<Uint8Array> {
    const bytes = this.bytes;
    this.bytes = undefined;
    return bytes ? { done: false, value: bytes } : { done: true, value: undefined };
  }
}

/** The body of an upstream answer: undici's stream when `upstreamFetch` made it, else the web stream. */
export function upstreamBody(response: Response): UpstreamBodyStream | ReadableStream<Uint8Array> | null {
  return rawBodies.get(response) ?? response.body;
}
