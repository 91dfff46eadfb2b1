export interface SseEvent {
  event: string | undefined;
  data: string;
  json?: any;
}

export interface StreamReply {
  status: number;
  headers: Headers;
  events: SseEvent[];
  /** Comment lines such as `: heartbeat`. */
  comments: string[];
  raw: string;
}

/** Posts a streamed request and parses the whole SSE body as a client would. */
export async function postStream(
  baseUrl: string,
  key: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<StreamReply> {
  const res = await fetch(`${baseUrl}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key, ...headers },
    body: JSON.stringify({ ...body, stream: true }),
  });
  const raw = await res.text();
  return { status: res.status, headers: res.headers, raw, ...parseSse(raw) };
}

export function parseSse(raw: string): { events: SseEvent[]; comments: string[] } {
  const events: SseEvent[] = [];
  const comments: string[] = [];
  for (const block of raw.split('\n\n')) {
    if (!block.trim()) continue;
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) comments.push(line);
      else if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (data.length === 0) continue;
    const joined = data.join('\n');
    let json: unknown;
    try {
      json = JSON.parse(joined);
    } catch {
      json = undefined;
    }
    events.push({ event, data: joined, json });
  }
  return { events, comments };
}

/** A streamed turn read up to its first text delta: surely in flight, not yet finished. */
export interface StreamInFlight {
  /** What has arrived so far. */
  raw: () => string;
  /** Reads the rest of the stream and returns the whole body. */
  rest: () => Promise<string>;
  abort: () => void;
}

/** Posts a streamed request (`body`'s fields added) and resolves once the first text delta has arrived. */
export async function openStreamAtFirstDelta(
  baseUrl: string,
  key: string,
  model: string,
  body: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<StreamInFlight> {
  const controller = new AbortController();
  const res = await fetch(`${baseUrl}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key, ...headers },
    body: JSON.stringify({ model, input: 'go', ...body, stream: true }),
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let raw = '';
  while (!raw.includes('response.output_text.delta')) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended before its first delta: ${raw}`);
    raw += decoder.decode(value, { stream: true });
  }
  return {
    raw: () => raw,
    rest: async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        raw += decoder.decode(value, { stream: true });
      }
      return raw;
    },
    abort: () => controller.abort(),
  };
}
