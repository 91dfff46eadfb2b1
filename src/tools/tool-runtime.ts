import type { Logger } from '@nestjs/common';
import { describeUnexpected } from '../common/errors/all-exceptions.filter.js';
import type { PluginEntity } from './entities/plugin.entity.js';
import type {
  ServerTool,
  ServerToolDefinition,
  ServerToolKind,
  ToolExecutionContext,
  ToolResult,
} from './server-tool.js';
import { SsrfRefusedError } from '../common/network/ssrf-policy.js';
import type { HeaderValue } from './tool-config.js';

/** A failure whose message the model may read as is (no secrets, no stack). */
export class ToolFailure extends Error {
  constructor(
    message: string,
    /** The remote service refused the user's token. */
    readonly unauthorized = false,
  ) {
    super(message);
    this.name = 'ToolFailure';
  }
}

/** The result that makes the turn emit an `oauth_required` item for the plugin. */
export function signInRequired(plugin: PluginEntity): ToolResult {
  const oauth = plugin.oauth;
  if (!oauth) return { ok: false, error: `${plugin.name} refused the request` };
  return {
    ok: false,
    error: `${plugin.name} is unavailable until the user signs in`,
    oauthRequired: {
      pluginId: plugin.id,
      pluginName: plugin.name,
      providerId: oauth.providerId,
      requiredScopes: [...oauth.requiredScopes],
      authUrl: oauth.authUrl,
    },
  };
}

/**
 * Literal and environment-held header values. Returns the header names that carry secrets (so
 * a redirect to another origin drops them) and their values (redacted from what the call reads
 * back); throws when a variable is unset, naming no value.
 */
export function resolveHeaders(
  headers: Record<string, HeaderValue>,
  secrets: Readonly<Record<string, string | undefined>>,
): { headers: Record<string, string>; sensitive: string[]; secretValues: string[] } {
  const resolved: Record<string, string> = {};
  const sensitive: string[] = [];
  const secretValues: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === 'string') {
      resolved[name] = value;
    } else {
      resolved[name] = requireSecret(secrets, value.fromEnv);
      sensitive.push(name.toLowerCase());
      secretValues.push(resolved[name]);
    }
  }
  return { headers: resolved, sensitive, secretValues };
}

export function requireSecret(secrets: Readonly<Record<string, string | undefined>>, name: string): string {
  const value = secrets[name]?.trim();
  if (!value) throw new MissingSecretError(name);
  return value;
}

/** A configured environment variable is unset; the model is told the tool is misconfigured. */
export class MissingSecretError extends Error {
  constructor(readonly variable: string) {
    super(`environment variable ${variable} is not set`);
    this.name = 'MissingSecretError';
  }
}

/**
 * `text` with every secret value a tool call sent (environment secrets, the user's tokens)
 * replaced by `[redacted]`, also in its JSON-escaped form: a server that echoes its request
 * must not put a token into what the model reads and the transcript stores.
 */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  const values = new Set<string>();
  for (const secret of secrets) {
    if (!secret) continue;
    values.add(secret);
    values.add(JSON.stringify(secret).slice(1, -1));
  }
  let redacted = text;
  // Longest first, so a secret that contains another is replaced whole.
  for (const value of [...values].sort((a, b) => b.length - a.length)) {
    redacted = redacted.split(value).join('[redacted]');
  }
  return redacted;
}

/** Aborts when the turn is aborted or the tool's time is up. */
export function deadline(signal: AbortSignal, timeoutMs: number): AbortSignal {
  return AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]);
}

/** A sentence the model can read for anything a tool threw; undefined when it is unexpected. */
export function describeFailure(
  error: unknown,
  turnSignal: AbortSignal,
  timeoutMs: number,
): string | undefined {
  if (error instanceof ToolFailure || error instanceof SsrfRefusedError) return error.message;
  if (error instanceof MissingSecretError) return 'The tool is misconfigured: a secret it needs is not set';
  if (turnSignal.aborted) return 'The tool call was cancelled';
  const name = (error as { name?: unknown }).name;
  if (name === 'TimeoutError' || name === 'AbortError') {
    return `The tool did not answer within ${Math.round(timeoutMs / 100) / 10} seconds`;
  }
  const cause = (error as { cause?: unknown }).cause ?? error;
  if (cause instanceof SsrfRefusedError) return cause.message;
  const code = (cause as { code?: unknown }).code;
  if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return `Could not reach the service (${code})`;
  if (name === 'TypeError' && error instanceof Error && /redirect/i.test(error.message)) return error.message;
  return undefined;
}

/** Cuts output longer than `maxBytes` (on a character boundary) and says how much was cut. */
export function capOutput(text: string, maxBytes: number): string {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= maxBytes) return text;
  const kept = Buffer.from(text, 'utf8')
    .subarray(0, maxBytes)
    .toString('utf8')
    .replace(/\uFFFD+$/, '');
  return `${kept}\n[output truncated: ${bytes - Buffer.byteLength(kept, 'utf8')} of ${bytes} bytes omitted]`;
}

/** Error text of a failed tool is kept short; output is capped by TOOL_OUTPUT_MAX_BYTES. */
const MAX_ERROR_BYTES = 2048;

/** A tool's own work, under the signal of its time limit. */
export type ToolWork = (
  args: Record<string, unknown>,
  context: ToolExecutionContext,
  signal: AbortSignal,
) => Promise<ToolResult>;

/** A tool's limits: its own time limit if its row sets one, else this replica's; the replica's output cap. */
export function toolLimits(
  replica: { timeoutMs: number; maxOutputBytes: number },
  ownTimeoutMs: number | undefined,
): { timeoutMs: number; maxOutputBytes: number } {
  return { timeoutMs: ownTimeoutMs ?? replica.timeoutMs, maxOutputBytes: replica.maxOutputBytes };
}

/**
 * Wraps a tool's work with what every tool shares: the plugin's sign-in requirement, the time
 * limit, never throwing, and the output cap.
 */
export function guardedTool(
  tool: { kind: ServerToolKind; definition: ServerToolDefinition; plugin: PluginEntity | null },
  limits: { timeoutMs: number; maxOutputBytes: number },
  logger: Pick<Logger, 'warn'>,
  work: ToolWork,
): ServerTool {
  const { kind, definition, plugin } = tool;
  const { timeoutMs, maxOutputBytes } = limits;
  return {
    kind,
    definition,
    execute: async (args, context) => {
      if (plugin?.oauth && !context.userTokens?.[plugin.oauth.providerId]) return signInRequired(plugin);
      try {
        const result = await work(args, context, deadline(context.signal, timeoutMs));
        return result.ok
          ? { ...result, output: capOutput(result.output, maxOutputBytes) }
          : { ...result, error: capOutput(result.error, MAX_ERROR_BYTES) };
      } catch (error) {
        if (error instanceof ToolFailure && error.unauthorized && plugin?.oauth)
          return signInRequired(plugin);
        if (error instanceof MissingSecretError) {
          logger.warn({ msg: 'tool secret not set', tool: definition.name, variable: error.variable });
        }
        const message = describeFailure(error, context.signal, timeoutMs);
        if (message === undefined) {
          logger.warn({
            ...describeUnexpected(error),
            msg: 'tool failed unexpectedly',
            tool: definition.name,
          });
        }
        return { ok: false, error: message ?? 'The tool failed unexpectedly' };
      }
    },
  };
}
