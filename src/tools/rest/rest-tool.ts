import type { PluginEntity } from '../entities/plugin.entity.js';
import type { ServerToolDefinition, ToolResult } from '../server-tool.js';
import { readCapped, type GuardedFetch } from '../ssrf/guarded-fetch.js';
import type { RestToolConfig } from '../tool-config.js';
import {
  redactSecrets,
  requireSecret,
  resolveHeaders,
  signInRequired,
  ToolFailure,
} from '../tool-runtime.js';

const PLACEHOLDER = /\{([a-zA-Z0-9_-]+)\}/g;
const ERROR_SNIPPET_CHARS = 300;

export function restDefinition(
  name: string,
  description: string,
  config: RestToolConfig,
): ServerToolDefinition {
  return {
    name,
    description: description || `Calls ${config.method} ${config.urlTemplate}`,
    parameters: config.parameters,
  };
}

function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Fills `{name}` placeholders; `encode` is applied to each value. Missing values are reported. */
function fill(
  template: string,
  args: Record<string, unknown>,
  encode: (text: string) => string,
  used: Set<string>,
) {
  let missing: string | undefined;
  const text = template.replace(PLACEHOLDER, (_match, name: string) => {
    used.add(name);
    const value = args[name];
    if (value === undefined || value === null) {
      missing ??= name;
      return '';
    }
    return encode(asText(value));
  });
  return { text, missing };
}

/** A body template: a string that is exactly `"{name}"` takes the argument with its JSON type. */
function fillTemplate(template: unknown, args: Record<string, unknown>, used: Set<string>): unknown {
  if (typeof template === 'string') {
    const whole = /^\{([a-zA-Z0-9_-]+)\}$/.exec(template);
    if (whole) {
      used.add(whole[1]);
      return args[whole[1]] ?? null;
    }
    return fill(template, args, (text) => text, used).text;
  }
  if (Array.isArray(template)) return template.map((item) => fillTemplate(item, args, used));
  if (typeof template === 'object' && template !== null) {
    return Object.fromEntries(
      Object.entries(template).map(([key, value]) => [key, fillTemplate(value, args, used)]),
    );
  }
  return template;
}

export interface RestCall {
  args: Record<string, unknown>;
  userTokens: Readonly<Record<string, string>> | undefined;
  signal: AbortSignal;
}

/**
 * One call of a declared REST tool: the URL from its template, query and body from the
 * arguments, headers and authentication from the declaration, through the guarded fetch.
 */
export async function runRestTool(
  config: RestToolConfig,
  plugin: PluginEntity | null,
  call: RestCall,
  http: GuardedFetch,
  secrets: Readonly<Record<string, string | undefined>>,
): Promise<ToolResult> {
  const { args } = call;
  const missingRequired = (config.parameters.required ?? []).find((name) => args[name] === undefined);
  if (missingRequired) throw new ToolFailure(`Missing required argument "${missingRequired}"`);

  const used = new Set<string>();
  const path = fill(config.urlTemplate, args, encodeURIComponent, used);
  if (path.missing) throw new ToolFailure(`Missing argument "${path.missing}"`);
  const url = new URL(path.text);
  if (config.query) {
    for (const [param, template] of Object.entries(config.query)) {
      const value = fill(template, args, (text) => text, used);
      // An optional argument that was not given leaves its parameter out.
      if (!value.missing) url.searchParams.set(param, value.text);
    }
  } else if (config.method === 'GET' || config.method === 'DELETE') {
    for (const [name, value] of Object.entries(args)) {
      if (!used.has(name) && value !== undefined && value !== null) url.searchParams.set(name, asText(value));
    }
  }

  const { headers, sensitive, secretValues } = resolveHeaders(config.headers, secrets);
  // Every secret value this call sends, redacted from what it reads back.
  const sent = [...secretValues];
  headers.accept ??= 'application/json, text/plain;q=0.9, */*;q=0.5';
  let body: string | undefined;
  if (config.body === 'json-args') {
    body = JSON.stringify(Object.fromEntries(Object.entries(args).filter(([name]) => !used.has(name))));
  } else if (typeof config.body === 'object') {
    body = JSON.stringify(fillTemplate(config.body.template, args, used));
  }
  if (body !== undefined) headers['content-type'] = 'application/json';

  const auth = config.auth;
  let userToken: string | undefined;
  if (auth.type === 'env') {
    const secret = requireSecret(secrets, auth.env);
    headers[auth.header] = `${auth.prefix}${secret}`;
    sensitive.push(auth.header.toLowerCase());
    sent.push(secret);
  } else if (auth.type === 'user_oauth') {
    userToken = call.userTokens?.[auth.providerId];
    if (!userToken) return needsSignIn(plugin, auth.providerId, 'missing');
    headers[auth.header] = `${auth.prefix}${userToken}`;
    sensitive.push(auth.header.toLowerCase());
    sent.push(userToken);
  }

  const response = await http.request(url, {
    method: config.method,
    headers,
    body,
    signal: call.signal,
    sensitiveHeaders: sensitive,
    traceContext: config.traceContext,
  });
  if (response.status === 401 && auth.type === 'user_oauth') {
    await response.body?.cancel();
    return needsSignIn(plugin, auth.providerId, 'refused');
  }
  const read = await readCapped(response, config.maxResponseBytes);
  const { truncated } = read;
  const text = redactSecrets(read.text, sent);
  if (!response.ok) {
    const detail = text.trim().slice(0, ERROR_SNIPPET_CHARS);
    return { ok: false, error: `The API answered HTTP ${response.status}${detail ? `: ${detail}` : ''}` };
  }
  if (text.length === 0) return { ok: true, output: `HTTP ${response.status} (no content)` };
  return {
    ok: true,
    output: truncated ? `${text}\n[response truncated at ${config.maxResponseBytes} bytes]` : text,
  };
}

/** Missing or refused user token: oauth_required when the tool's plugin is for that provider. */
function needsSignIn(
  plugin: PluginEntity | null,
  providerId: string,
  why: 'missing' | 'refused',
): ToolResult {
  if (plugin?.oauth?.providerId === providerId) return signInRequired(plugin);
  return {
    ok: false,
    error:
      why === 'missing'
        ? `This tool needs the user's sign-in with ${providerId}, which the request did not provide`
        : `The API refused the user's ${providerId} token (HTTP 401)`,
  };
}
