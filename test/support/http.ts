export interface ApiReply {
  status: number;
  headers: Headers;
  /** Parsed JSON, or the raw text when the body is not JSON. */
  body: any;
}

/** A plain HTTP call as a client would make it, with the body parsed for assertions. */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  options: { key?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<ApiReply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers['x-api-key'] = options.key;
  let body: string | undefined;
  if (options.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  }
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/**
 * Polls `GET /v1/responses/{id}` (bounded) until the response leaves `queued` / `in_progress`;
 * returns its body. Every poll must answer 200.
 */
export async function untilFinished(baseUrl: string, key: string, id: string): Promise<any> {
  for (let attempt = 0; attempt < 500; attempt++) {
    const reply = await call(baseUrl, 'GET', `/v1/responses/${id}`, { key });
    if (reply.status !== 200) throw new Error(`GET ${id} answered ${reply.status}`);
    if (!['queued', 'in_progress'].includes(reply.body.status)) return reply.body;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`${id} did not finish`);
}
