/**
 * The only way the console talks to the service: the documented HTTP APIs, relative to where the
 * console is served (one level above /console/), so a path prefix in front of the service works.
 */
export const apiBase = new URL('../', document.baseURI);

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let credential: string | null = null;
let onActivity: () => void = () => undefined;
let onUnauthorized: () => void = () => undefined;

/** Set by the session (session.ts): the credential to send, and what to do on 401. */
export function bindSession(value: string | null, activity: () => void, unauthorized: () => void): void {
  credential = value;
  onActivity = activity;
  onUnauthorized = unauthorized;
}

export type Query = Record<string, string | number | undefined>;

export function url(path: string, query: Query = {}): URL {
  const target = new URL(path.replace(/^\//, ''), apiBase);
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') target.searchParams.set(name, String(value));
  }
  return target;
}

export async function call<T>(
  method: string,
  path: string,
  body?: unknown,
  query?: Query,
  extraHeaders: Record<string, string> = {},
): Promise<T> {
  onActivity();
  const headers: Record<string, string> = { ...extraHeaders, accept: 'application/json' };
  if (credential !== null) headers.authorization = `Bearer ${credential}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url(path, query), {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'omit',
    cache: 'no-store',
  });
  const text = await response.text();
  const parsed = text === '' ? null : (JSON.parse(text) as unknown);
  if (!response.ok) {
    const error = (parsed as { error?: { code?: string; message?: string } } | null)?.error;
    if (response.status === 401) onUnauthorized();
    throw new ApiFailure(
      response.status,
      error?.code ?? 'error',
      error?.message ?? `HTTP ${response.status}`,
    );
  }
  return parsed as T;
}

export const get = <T>(path: string, query?: Query, headers?: Record<string, string>) =>
  call<T>('GET', path, undefined, query, headers);
export const put = <T>(path: string, body: unknown) => call<T>('PUT', path, body);
export const post = <T>(path: string, body?: unknown) => call<T>('POST', path, body ?? {});
export const del = <T>(path: string) => call<T>('DELETE', path);

export interface List<T> {
  object: 'list';
  data: T[];
  next_cursor?: string | null;
}

/** Which form field an error message is about: the API names the field at its start. */
export function fieldOf(message: string, fields: readonly string[]): string | null {
  const lowered = message.toLowerCase();
  for (const field of fields) {
    const name = field.toLowerCase();
    if (lowered.startsWith(name) || lowered.includes(` ${name}.`) || lowered.includes(`"${name}`))
      return field;
    if (lowered.includes(` ${name} `) || lowered.includes(` ${name}:`)) return field;
  }
  return null;
}
