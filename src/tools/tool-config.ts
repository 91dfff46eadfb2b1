import type { JsonSchemaObject } from './server-tool.js';

/**
 * What a `tools` row holds in its `config` column, per kind, and its validation. Validated
 * whenever a tool is written (CLI, `apply -f`); executors trust what is stored.
 */
export const TOOL_KINDS = ['web_search', 'rest', 'mcp'] as const;
export type ToolKind = (typeof TOOL_KINDS)[number];

export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** A header value: literal, or the name of an environment variable holding a secret. */
export type HeaderValue = string | { fromEnv: string };

export type WebSearchConfig =
  | {
      provider: 'searxng';
      /** The SearXNG instance, e.g. https://search.example.com; its JSON format must be enabled. */
      baseUrl: string;
      maxResults: number;
      language?: string;
      timeoutMs?: number;
      /** Send the request's W3C trace context (traceparent, tracestate, baggage); default false. */
      traceContext?: boolean;
    }
  | {
      provider: 'brave';
      /** Default https://api.search.brave.com; another value points at a compatible proxy. */
      baseUrl: string;
      /** Environment variable holding the subscription token. */
      apiKeyEnv: string;
      maxResults: number;
      timeoutMs?: number;
      traceContext?: boolean;
    };

export type RestAuth =
  | { type: 'none' }
  /** A secret from the environment, sent as `<header>: <prefix><value>`. */
  | { type: 'env'; env: string; header: string; prefix: string }
  /** The user's token for `providerId` from `x-user-tokens`. */
  | { type: 'user_oauth'; providerId: string; header: string; prefix: string };

export type RestBody = 'json-args' | 'none' | { template: unknown };

export interface RestToolConfig {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** `https://api.example.com/items/{id}`: `{name}` takes the argument, URL-encoded; never in the origin. */
  urlTemplate: string;
  headers: Record<string, HeaderValue>;
  /** Query parameter → template (`"{q}"`, or literal text). Absent: GET and DELETE send the unused arguments. */
  query?: Record<string, string>;
  body: RestBody;
  timeoutMs?: number;
  /** Most bytes read from the response; the rest is not downloaded. */
  maxResponseBytes: number;
  auth: RestAuth;
  parameters: JsonSchemaObject;
  /** Send the request's W3C trace context to the API; default false (a third party learns nothing of it). */
  traceContext?: boolean;
}

export interface McpServerConfig {
  url: string;
  /** `auto` tries Streamable HTTP, then the older HTTP+SSE transport. */
  transport: 'auto' | 'streamable-http' | 'sse';
  /** Send the request's `x-user-token` as `Authorization: Bearer <token>`, unchanged. */
  forwardUserToken: boolean;
  headers: Record<string, HeaderValue>;
  /** Only these remote tools (by their name on the server); absent = all. */
  allowedTools?: string[];
  /** Put before each remote tool name; absent = `<row name>_`, `""` = none. */
  toolPrefix?: string;
  timeoutMs?: number;
  /** Send the request's W3C trace context to the server; default false. */
  traceContext?: boolean;
}

export type ToolConfig = WebSearchConfig | RestToolConfig | McpServerConfig;

export class ToolConfigError extends Error {}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const FORBIDDEN_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'upgrade']);
const PROVIDER_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const PLACEHOLDER = /\{([a-zA-Z0-9_-]+)\}/g;
const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function allowOnly(source: Record<string, unknown>, where: string, keys: readonly string[]): void {
  const unknown = Object.keys(source).filter((key) => !keys.includes(key));
  if (unknown.length > 0) throw new ToolConfigError(`${where} has unknown field "${unknown[0]}"`);
}

function httpUrl(value: unknown, where: string): string {
  if (typeof value !== 'string') throw new ToolConfigError(`${where} must be an absolute http(s) URL`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ToolConfigError(`${where} must be an absolute http(s) URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ToolConfigError(`${where} must use http or https`);
  if (url.username || url.password)
    throw new ToolConfigError(`${where} must not carry credentials; use headers`);
  return value;
}

function envName(value: unknown, where: string): string {
  if (typeof value !== 'string' || !ENV_NAME.test(value)) {
    throw new ToolConfigError(`${where} must name an environment variable (letters, digits, _)`);
  }
  return value;
}

function optionalInteger(
  source: Record<string, unknown>,
  key: string,
  where: string,
  min: number,
  max: number,
) {
  const value = source[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ToolConfigError(`${where}.${key} must be a whole number between ${min} and ${max}`);
  }
  return value;
}

/** The opt-in `traceContext` flag: true, or left out. */
function traceContext(source: Record<string, unknown>): { traceContext?: true } {
  const value = source.traceContext;
  if (value === undefined || value === false) return {};
  if (value !== true) throw new ToolConfigError('config.traceContext must be true or false');
  return { traceContext: true };
}

function stringList(value: unknown, where: string): string[] {
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string' && item.length > 0)) {
    throw new ToolConfigError(`${where} must be a list of strings`);
  }
  return [...new Set(value as string[])];
}

function headers(value: unknown, where: string): Record<string, HeaderValue> {
  if (value === undefined) return {};
  if (!isObject(value)) throw new ToolConfigError(`${where} must map header names to values`);
  const parsed: Record<string, HeaderValue> = {};
  for (const [name, headerValue] of Object.entries(value)) {
    if (!HEADER_NAME.test(name) || FORBIDDEN_HEADERS.has(name.toLowerCase())) {
      throw new ToolConfigError(`${where}: "${name}" is not a header a tool may set`);
    }
    if (typeof headerValue === 'string') {
      if (/[\r\n]/.test(headerValue)) throw new ToolConfigError(`${where}.${name} must be one line`);
      parsed[name] = headerValue;
    } else if (isObject(headerValue) && Object.keys(headerValue).length === 1) {
      parsed[name] = { fromEnv: envName(headerValue.fromEnv, `${where}.${name}.fromEnv`) };
    } else {
      throw new ToolConfigError(`${where}.${name} must be a string or {fromEnv: VARIABLE}`);
    }
  }
  return parsed;
}

/** Validates a JSON-schema object as function-calling models accept it. */
export function parseParameters(value: unknown, where: string): JsonSchemaObject {
  if (value === undefined) return { type: 'object', properties: {} };
  if (!isObject(value) || value.type !== 'object')
    throw new ToolConfigError(`${where} must be a schema with type: object`);
  if (value.properties !== undefined && !isObject(value.properties)) {
    throw new ToolConfigError(`${where}.properties must be an object`);
  }
  if (value.required !== undefined) {
    const required = stringList(value.required, `${where}.required`);
    const properties = value.properties ?? {};
    const missing = required.find((name) => !(name in properties));
    if (missing)
      throw new ToolConfigError(`${where}.required names "${missing}", which is not in properties`);
  }
  return value as JsonSchemaObject;
}

export function parseWebSearchConfig(input: unknown): WebSearchConfig {
  if (!isObject(input)) throw new ToolConfigError('config must be an object');
  const maxResults = optionalInteger(input, 'maxResults', 'config', 1, 20) ?? 5;
  const timeoutMs = optionalInteger(input, 'timeoutMs', 'config', 100, 600_000);
  if (input.provider === 'searxng') {
    allowOnly(input, 'config', [
      'provider',
      'baseUrl',
      'maxResults',
      'language',
      'timeoutMs',
      'traceContext',
    ]);
    if (
      input.language !== undefined &&
      (typeof input.language !== 'string' || !/^[A-Za-z-]{2,16}$/.test(input.language))
    ) {
      throw new ToolConfigError('config.language must be a language code such as en or de-CH');
    }
    return {
      provider: 'searxng',
      baseUrl: httpUrl(input.baseUrl, 'config.baseUrl'),
      maxResults,
      language: input.language,
      timeoutMs,
      ...traceContext(input),
    };
  }
  if (input.provider === 'brave') {
    allowOnly(input, 'config', [
      'provider',
      'baseUrl',
      'apiKeyEnv',
      'maxResults',
      'timeoutMs',
      'traceContext',
    ]);
    return {
      provider: 'brave',
      baseUrl:
        input.baseUrl === undefined
          ? 'https://api.search.brave.com'
          : httpUrl(input.baseUrl, 'config.baseUrl'),
      apiKeyEnv: envName(input.apiKeyEnv, 'config.apiKeyEnv'),
      maxResults,
      timeoutMs,
      ...traceContext(input),
    };
  }
  throw new ToolConfigError('config.provider must be "searxng" or "brave"');
}

function restAuth(value: unknown): RestAuth {
  if (value === undefined) return { type: 'none' };
  if (!isObject(value)) throw new ToolConfigError('config.auth must be an object');
  const header = value.header ?? 'Authorization';
  if (typeof header !== 'string' || !HEADER_NAME.test(header))
    throw new ToolConfigError('config.auth.header must be a header name');
  const prefix = value.prefix ?? (header.toLowerCase() === 'authorization' ? 'Bearer ' : '');
  if (typeof prefix !== 'string' || /[\r\n]/.test(prefix))
    throw new ToolConfigError('config.auth.prefix must be one line');
  if (value.type === 'none') {
    allowOnly(value, 'config.auth', ['type']);
    return { type: 'none' };
  }
  if (value.type === 'env') {
    allowOnly(value, 'config.auth', ['type', 'env', 'header', 'prefix']);
    return { type: 'env', env: envName(value.env, 'config.auth.env'), header, prefix };
  }
  if (value.type === 'user_oauth') {
    allowOnly(value, 'config.auth', ['type', 'providerId', 'header', 'prefix']);
    if (typeof value.providerId !== 'string' || !PROVIDER_ID.test(value.providerId)) {
      throw new ToolConfigError(
        'config.auth.providerId must be an OAuth provider id (letters, digits, . _ : -)',
      );
    }
    return { type: 'user_oauth', providerId: value.providerId, header, prefix };
  }
  throw new ToolConfigError('config.auth.type must be "none", "env" or "user_oauth"');
}

function placeholders(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((match) => match[1]);
}

export function parseRestToolConfig(input: unknown): RestToolConfig {
  if (!isObject(input)) throw new ToolConfigError('config must be an object');
  allowOnly(input, 'config', [
    'method',
    'urlTemplate',
    'headers',
    'query',
    'body',
    'timeoutMs',
    'maxResponseBytes',
    'auth',
    'parameters',
    'traceContext',
  ]);
  const method = typeof input.method === 'string' ? input.method.toUpperCase() : 'GET';
  if (!['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) {
    throw new ToolConfigError('config.method must be GET, POST, PUT, PATCH or DELETE');
  }
  if (typeof input.urlTemplate !== 'string') throw new ToolConfigError('config.urlTemplate is required');
  const origin = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(input.urlTemplate)?.[0] ?? '';
  // The model fills placeholders; letting it choose the host would let it choose where data goes.
  if (origin.includes('{'))
    throw new ToolConfigError('config.urlTemplate may not have placeholders in its host');
  httpUrl(input.urlTemplate.replace(PLACEHOLDER, 'x'), 'config.urlTemplate');
  const parameters = parseParameters(input.parameters, 'config.parameters');
  const properties = parameters.properties ?? {};
  let query: Record<string, string> | undefined;
  if (input.query !== undefined) {
    if (!isObject(input.query) || !Object.values(input.query).every((value) => typeof value === 'string')) {
      throw new ToolConfigError('config.query must map query parameter names to templates such as "{q}"');
    }
    query = input.query as Record<string, string>;
  }
  let body: RestBody;
  if (input.body === undefined) body = method === 'GET' || method === 'DELETE' ? 'none' : 'json-args';
  else if (input.body === 'json-args' || input.body === 'none') body = input.body;
  else if (isObject(input.body) && 'template' in input.body && Object.keys(input.body).length === 1) {
    body = { template: input.body.template };
  } else throw new ToolConfigError('config.body must be "json-args", "none" or {template: ...}');
  if (body !== 'none' && (method === 'GET' || method === 'DELETE')) {
    throw new ToolConfigError(`config.body must be "none" for ${method}`);
  }
  const used = [
    ...placeholders(input.urlTemplate),
    ...Object.values(query ?? {}).flatMap(placeholders),
    ...(typeof body === 'object' ? placeholders(JSON.stringify(body.template)) : []),
  ];
  const undeclared = used.find((name) => !(name in properties));
  if (undeclared)
    throw new ToolConfigError(`placeholder {${undeclared}} is not declared in config.parameters.properties`);
  return {
    method: method as RestToolConfig['method'],
    urlTemplate: input.urlTemplate,
    headers: headers(input.headers, 'config.headers'),
    query,
    body,
    timeoutMs: optionalInteger(input, 'timeoutMs', 'config', 100, 600_000),
    maxResponseBytes:
      optionalInteger(input, 'maxResponseBytes', 'config', 1024, 64 * 1024 * 1024) ??
      DEFAULT_MAX_RESPONSE_BYTES,
    auth: restAuth(input.auth),
    parameters,
    ...traceContext(input),
  };
}

export function parseMcpServerConfig(input: unknown): McpServerConfig {
  if (!isObject(input)) throw new ToolConfigError('config must be an object');
  allowOnly(input, 'config', [
    'url',
    'transport',
    'forwardUserToken',
    'headers',
    'allowedTools',
    'toolPrefix',
    'timeoutMs',
    'traceContext',
  ]);
  const transport = input.transport ?? 'auto';
  if (transport !== 'auto' && transport !== 'streamable-http' && transport !== 'sse') {
    throw new ToolConfigError('config.transport must be "auto", "streamable-http" or "sse"');
  }
  const forwardUserToken = input.forwardUserToken ?? false;
  if (typeof forwardUserToken !== 'boolean')
    throw new ToolConfigError('config.forwardUserToken must be true or false');
  if (
    input.toolPrefix !== undefined &&
    (typeof input.toolPrefix !== 'string' || !/^[a-zA-Z0-9_-]{0,32}$/.test(input.toolPrefix))
  ) {
    throw new ToolConfigError('config.toolPrefix must be up to 32 letters, digits, _ or -');
  }
  return {
    url: httpUrl(input.url, 'config.url'),
    transport,
    forwardUserToken,
    headers: headers(input.headers, 'config.headers'),
    allowedTools:
      input.allowedTools === undefined ? undefined : stringList(input.allowedTools, 'config.allowedTools'),
    toolPrefix: input.toolPrefix,
    timeoutMs: optionalInteger(input, 'timeoutMs', 'config', 100, 600_000),
    ...traceContext(input),
  };
}

export function parseToolConfig(kind: ToolKind, input: unknown): ToolConfig {
  if (kind === 'web_search') return parseWebSearchConfig(input);
  if (kind === 'rest') return parseRestToolConfig(input);
  return parseMcpServerConfig(input);
}

/** The provider id of an OAuth plugin. */
export function isProviderId(value: unknown): value is string {
  return typeof value === 'string' && PROVIDER_ID.test(value);
}
