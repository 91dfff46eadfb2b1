import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { OfflineModelSettings, OfflineRule } from './model-settings.js';
import {
  ContextLengthError,
  TurnAbortedError,
  type ChatMessage,
  type LlmProvider,
  type ModelEvent,
  type ModelOutputFormat,
  type ModelRequest,
  type ModelTool,
  type TokenLogprob,
} from './llm.types.js';
import { compilePattern, patternMatches, type OfflinePattern } from './offline-pattern.js';
import { latestInput, readUserContent, type LatestInput } from './offline-input-reader.js';
import { matchingCall } from './offline-tool-match.js';
import { exampleFor } from './schema-example.js';
import { estimateAllTokens } from './token-estimate.js';
import { allMessages } from './stored-messages.js';

/**
 * The deterministic offline model: no network, same answer for the same context. It backs the
 * quickstart assistant and users' own CI. See OfflineModelSettings for the script format.
 */
export class OfflineModelProvider implements LlmProvider {
  async *stream(request: ModelRequest): AsyncIterable<ModelEvent[]> {
    const settings = request.settings as OfflineModelSettings;
    const { options } = request;
    const messages = allMessages(request);
    if (settings.contextWindow !== undefined && estimateAllTokens(messages) > settings.contextWindow) {
      throw new ContextLengthError();
    }
    const latest = latestInput(messages);
    const rule = (settings.script ?? []).find((candidate) => matches(candidate, latest));
    const reasoning = rule?.reasoning ?? '';
    for (const token of tokens(reasoning)) {
      await this.pause(settings, request.signal);
      yield [{ type: 'reasoning', delta: token }];
    }

    const call = chooseCall(rule, request, latest);
    if (call) {
      const args = JSON.stringify(call.arguments);
      yield [
        {
          type: 'tool_call',
          index: 0,
          id: `call_${digest(messages, call.tool)}`,
          name: call.tool,
          argumentsDelta: '',
        },
      ];
      // Arguments arrive in fragments, as they do from real providers.
      for (const fragment of args.match(/.{1,16}/gs) ?? []) {
        await this.pause(settings, request.signal);
        yield [{ type: 'tool_call', index: 0, argumentsDelta: fragment }];
      }
      yield [usage(messages, args, reasoning)];
      return;
    }

    const reply = formatted(replyFor(rule, latest), options.format);
    let words = tokens(reply);
    const cut = options.maxOutputTokens !== undefined && words.length > options.maxOutputTokens;
    if (cut) words = words.slice(0, options.maxOutputTokens);
    for (const token of words) {
      await this.pause(settings, request.signal);
      yield [
        options.topLogprobs === undefined
          ? { type: 'text', delta: token }
          : { type: 'text', delta: token, logprobs: [certain(token, options.topLogprobs)] },
      ];
    }
    if (cut) yield [{ type: 'stopped_short', reason: 'max_output_tokens' }];
    yield [usage(messages, words.join(''), reasoning)];
  }

  private async pause(settings: OfflineModelSettings, signal: AbortSignal): Promise<void> {
    if (signal.aborted) throw new TurnAbortedError();
    if (settings.tokenDelayMs) {
      try {
        await sleep(settings.tokenDelayMs, undefined, { signal });
      } catch {
        throw new TurnAbortedError();
      }
    }
  }
}

function matches(rule: OfflineRule, latest: LatestInput): boolean {
  if ((rule.on ?? 'user') !== latest.source) return false;
  const pattern = compiled(rule.match);
  return pattern !== null && patternMatches(pattern, latest.text);
}

/** Compiled patterns by source; a stored pattern the matcher refuses never matches. */
const patterns = new Map<string, OfflinePattern | null>();

function compiled(source: string): OfflinePattern | null {
  let pattern = patterns.get(source);
  if (pattern === undefined) {
    try {
      pattern = compilePattern(source);
    } catch {
      pattern = null;
    }
    if (patterns.size >= 1000) patterns.clear();
    patterns.set(source, pattern);
  }
  return pattern;
}

function replyFor(rule: OfflineRule | undefined, latest: LatestInput): string {
  if (rule?.reply !== undefined) return rule.reply.replaceAll('{{input}}', latest.text);
  if (rule?.call) return `The tool ${rule.call.tool} is not available in this conversation.`;
  if (latest.source === 'tool') return `The tool ${latest.toolName ?? 'call'} returned: ${latest.text}`;
  const said = latest.said.trim();
  if (!said && latest.attachments.length === 0) return 'Hello from the offline model.';
  return [said ? `You said: ${said}` : '', ...latest.attachments].filter(Boolean).join(' ');
}

function digest(messages: ChatMessage[], salt: string): string {
  return createHash('sha256').update(JSON.stringify(messages)).update(salt).digest('hex').slice(0, 24);
}

function usage(messages: ChatMessage[], output: string, reasoning: string): ModelEvent {
  const words = (text: string) => text.split(/\s+/).filter(Boolean).length;
  const text = (m: ChatMessage) =>
    typeof m.content === 'string' ? m.content : m.role === 'user' ? readUserContent(m.content).said : '';
  const input = messages.reduce((sum, m) => sum + words(text(m)), 0);
  const reasoningTokens = words(reasoning);
  return {
    type: 'usage',
    usage: { inputTokens: input, outputTokens: words(output) + reasoningTokens, reasoningTokens },
  };
}

/** The offline model's tokens: words with their trailing space. */
function tokens(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

/** A deterministic model is certain of every token it writes: log probability 0. */
function certain(token: string, alternatives: number): TokenLogprob {
  const bytes = [...Buffer.from(token, 'utf8')];
  return { token, logprob: 0, bytes, top_logprobs: alternatives > 0 ? [{ token, logprob: 0, bytes }] : [] };
}

/**
 * The call the model makes, if any. `tool_choice: "none"` forbids calls; under `auto` a matching
 * script rule decides, else a tool named after the user's words (offline-tool-match); a forced choice
 * (`required` or a named function) calls the scripted tool when it qualifies, otherwise the
 * named (or first offered) tool, with arguments built from its parameters schema.
 */
function chooseCall(
  rule: OfflineRule | undefined,
  request: ModelRequest,
  latest: LatestInput,
): { tool: string; arguments: Record<string, unknown> } | undefined {
  const choice = request.options.toolChoice ?? { mode: 'auto' };
  if (choice.mode === 'none' || request.tools.length === 0) return undefined;
  const offered = new Map(request.tools.map((tool) => [tool.name, tool]));
  const scripted = rule?.call && offered.has(rule.call.tool) ? rule.call : undefined;
  if (choice.mode === 'auto') {
    // A matching script rule decides alone; otherwise a tool named after what the user asks.
    if (rule || latest.source !== 'user') return scripted;
    return matchingCall(request.tools, latest.said);
  }
  if (scripted && (!choice.name || choice.name === scripted.tool)) return scripted;
  const tool: ModelTool | undefined = choice.name ? offered.get(choice.name) : request.tools[0];
  if (!tool) return undefined;
  const args = exampleFor(tool.parameters, 'example');
  return {
    tool: tool.name,
    arguments: typeof args === 'object' && args !== null ? (args as Record<string, unknown>) : {},
  };
}

/**
 * Structured output: a scripted reply that is already JSON of the right kind is kept; otherwise
 * the reply text becomes `{"answer": …}` (json_object) or fills a value of the schema.
 */
function formatted(reply: string, format: ModelOutputFormat | undefined): string {
  if (!format) return reply;
  let parsed: unknown;
  try {
    parsed = JSON.parse(reply);
  } catch {
    parsed = undefined;
  }
  if (format.type === 'json_object') {
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? reply
      : JSON.stringify({ answer: reply });
  }
  return parsed !== undefined ? reply : JSON.stringify(exampleFor(format.schema, reply));
}
