import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { OfflineModelSettings, OfflineRule } from './model-settings.js';
import {
  TurnAbortedError,
  type ChatMessage,
  type LlmProvider,
  type ModelEvent,
  type ModelRequest,
} from './llm.types.js';

/**
 * The deterministic offline model: no network, same answer for the same context. It backs the
 * quickstart assistant and users' own CI. See OfflineModelSettings for the script format.
 */
export class OfflineModelProvider implements LlmProvider {
  async *stream(request: ModelRequest): AsyncIterable<ModelEvent[]> {
    const settings = request.settings as OfflineModelSettings;
    const latest = latestInput(request.messages);
    const rule = (settings.script ?? []).find((candidate) => matches(candidate, latest));
    const offered = new Set(request.tools.map((tool) => tool.name));

    if (rule?.call && offered.has(rule.call.tool)) {
      const args = JSON.stringify(rule.call.arguments);
      yield [
        {
          type: 'tool_call',
          index: 0,
          id: `call_${digest(request.messages, rule.call.tool)}`,
          name: rule.call.tool,
          argumentsDelta: '',
        },
      ];
      // Arguments arrive in fragments, as they do from real providers.
      for (const fragment of args.match(/.{1,16}/gs) ?? []) {
        await this.pause(settings, request.signal);
        yield [{ type: 'tool_call', index: 0, argumentsDelta: fragment }];
      }
      yield [usage(request.messages, args)];
      return;
    }

    const reply = replyFor(rule, latest);
    for (const token of reply.match(/\S+\s*|\s+/g) ?? []) {
      await this.pause(settings, request.signal);
      yield [{ type: 'text', delta: token }];
    }
    yield [usage(request.messages, reply)];
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

interface LatestInput {
  source: 'user' | 'tool';
  text: string;
  toolName?: string;
}

function latestInput(messages: ChatMessage[]): LatestInput {
  const last = messages[messages.length - 1];
  if (last?.role === 'tool') {
    const call = messages
      .flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []) : []))
      .find((c) => c.id === last.tool_call_id);
    return { source: 'tool', text: last.content, toolName: call?.function.name };
  }
  const user = [...messages].reverse().find((m) => m.role === 'user');
  return { source: 'user', text: user?.content ?? '' };
}

function matches(rule: OfflineRule, latest: LatestInput): boolean {
  if ((rule.on ?? 'user') !== latest.source) return false;
  return new RegExp(rule.match, 'i').test(latest.text);
}

function replyFor(rule: OfflineRule | undefined, latest: LatestInput): string {
  if (rule?.reply !== undefined) return rule.reply.replaceAll('{{input}}', latest.text);
  if (rule?.call) return `The tool ${rule.call.tool} is not available in this conversation.`;
  if (latest.source === 'tool') return `The tool ${latest.toolName ?? 'call'} returned: ${latest.text}`;
  return latest.text.trim().length > 0 ? `You said: ${latest.text.trim()}` : 'Hello from the offline model.';
}

function digest(messages: ChatMessage[], salt: string): string {
  return createHash('sha256').update(JSON.stringify(messages)).update(salt).digest('hex').slice(0, 24);
}

function usage(messages: ChatMessage[], output: string): ModelEvent {
  const words = (text: string) => text.split(/\s+/).filter(Boolean).length;
  const input = messages.reduce((sum, m) => sum + words(typeof m.content === 'string' ? m.content : ''), 0);
  return { type: 'usage', usage: { inputTokens: input, outputTokens: words(output) } };
}
