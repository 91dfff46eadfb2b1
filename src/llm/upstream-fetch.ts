import type { Readable } from 'node:stream';
import { Agent, request, type buildConnector, type Dispatcher } from 'undici';

/** undici's Node stream of an answer's body. */
export type UpstreamBodyStream = Dispatcher.ResponseData['body'];

/** The body of a successful upstream answer as undici's Node stream, keyed by the Response the SDK saw. */
const rawBodies = new WeakMap<Response, UpstreamBodyStream>();

/**
 * A `fetch` for the openai SDK on undici's `request` over one keep-alive pool per upstream. The
 * global fetch wraps each request and its body in WHATWG objects (Request, Headers, a byte
 * stream read one promise per network read); here the SDK gets a bodiless Response for a
 * success and the turn reads the Node stream behind it (`upstreamBody`). Error answers carry
 * their text, so the SDK builds its APIError (status, code, param) as it always did.
 */
export function upstreamFetch(connect?: buildConnector.connector): typeof fetch {
  // `connect`: the SSRF guard of an organization-written base URL (every connection checked).
  const dispatcher = new Agent(connect ? { connect } : {});
  const send = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const bytes = requestBytes(init?.body);
    const { statusCode, headers, body } = await request(url, {
      dispatcher,
      method: (init?.method ?? 'GET') as 'POST',
      // Its length stated, the body goes out as one write, as a buffer would (the same bytes).
      headers: bytes
        ? withLength(init?.headers, bytes.byteLength)
        : (init?.headers as Iterable<[string, string]> | undefined),
      // An iterable body is documented (docs/api/Dispatcher.md) but missing from undici's types.
      // Any other kind of body (never sent by the SDK's JSON calls) goes to undici as it came.
      body: bytes
        ? (new BodyOnce(bytes) as unknown as Readable)
        : (init?.body as Readable | null | undefined),
      signal: init?.signal ?? undefined,
    });
    // A plain record: the Response makes its own Headers from it (a Headers given here would be
    // one more object, iterated and sorted to be copied).
    // No prototype: a header named `__proto__` is kept as a header, not taken as one.
    const responseHeaders = Object.create(null) as Record<string, string>;
    for (const name in headers) {
      const value = headers[name];
      if (value !== undefined) responseHeaders[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    if (statusCode < 200 || statusCode >= 300) {
      return new Response(await body.text(), { status: statusCode, headers: responseHeaders });
    }
    const response = new Response(null, { status: statusCode, headers: responseHeaders });
    // 204 and 205 have no body, as the global fetch would say (the turn treats that as a failure).
    if (statusCode === 204 || statusCode === 205) await body.dump();
    else rawBodies.set(response, body);
    return response;
  };
  return send;
}

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

/** The headers (any form `fetch` takes) as undici's flat name, value list, with the body's length. */
function withLength(headers: RequestInit['headers'], length: number): string[] {
  const flat: string[] = [];
  // The SDK passes a Headers: read as it is (its names lowercase, duplicates combined), not
  // copied into another one first.
  const list = headers instanceof Headers ? headers : new Headers(headers);
  for (const [name, value] of list) {
    if (name !== 'content-length') flat.push(name, value);
  }
  flat.push('content-length', String(length));
  return flat;
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
