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
