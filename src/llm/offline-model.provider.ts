import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { OfflineModelSettings, OfflineRule } from './model-settings.js';
import {
  TurnAbortedError,
  type ChatContentPart,
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
  /** What scripts match: the text, then one sentence per image or file. */
  text: string;
  /** The text alone, and the sentences for images and files. */
  said: string;
  attachments: string[];
  toolName?: string;
}

function latestInput(messages: ChatMessage[]): LatestInput {
  const last = messages[messages.length - 1];
  if (last?.role === 'tool') {
    const call = messages
      .flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []) : []))
      .find((c) => c.id === last.tool_call_id);
    return {
      source: 'tool',
      text: last.content,
      said: last.content,
      attachments: [],
      toolName: call?.function.name,
    };
  }
  const user = [...messages].reverse().find((m) => m.role === 'user');
  const { said, attachments } = readUserContent(user?.content ?? '');
  return { source: 'user', text: [said.trim(), ...attachments].filter(Boolean).join(' '), said, attachments };
}

/**
 * A user message as the offline model reads it: its text, and one sentence per image or file
 * (type and size, the file's name), so scripts can match on them and CI sees they arrived.
 */
function readUserContent(content: string | ChatContentPart[]): { said: string; attachments: string[] } {
  if (typeof content === 'string') return { said: content, attachments: [] };
  const said = content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  const attachments = content.flatMap((part) => {
    if (part.type === 'image_url') return [`You sent an image (${describeDataUrl(part.image_url.url)}).`];
    if (part.type === 'file') {
      return [
        `You sent the file ${part.file.filename ?? 'attachment'} (${describeDataUrl(part.file.file_data)}).`,
      ];
    }
    return [];
  });
  return { said, attachments };
}

/** `image/png, 68 bytes` for a base64 data URL; the URL itself otherwise. */
function describeDataUrl(url: string): string {
  const match = /^data:([^;,]+);base64,/.exec(url);
  if (!match) return url;
  const base64 = url.slice(match[0].length);
  const bytes =
    Math.floor((base64.length * 3) / 4) - (base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0);
  return `${match[1]}, ${bytes} bytes`;
}

function matches(rule: OfflineRule, latest: LatestInput): boolean {
  if ((rule.on ?? 'user') !== latest.source) return false;
  return new RegExp(rule.match, 'i').test(latest.text);
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

function usage(messages: ChatMessage[], output: string): ModelEvent {
  const words = (text: string) => text.split(/\s+/).filter(Boolean).length;
  const text = (m: ChatMessage) =>
    typeof m.content === 'string' ? m.content : m.role === 'user' ? readUserContent(m.content).said : '';
  const input = messages.reduce((sum, m) => sum + words(text(m)), 0);
  return { type: 'usage', usage: { inputTokens: input, outputTokens: words(output) } };
}
