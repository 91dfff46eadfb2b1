import type { ChatContentPart, ChatMessage } from './llm.types.js';

// What the offline model reads of its context: the latest input it answers (the user's message,
// or a tool's result), with images and files as sentences scripts can match on.

export interface LatestInput {
  source: 'user' | 'tool';
  /** What scripts match: the text, then one sentence per image or file. */
  text: string;
  /** The text alone, and the sentences for images and files. */
  said: string;
  attachments: string[];
  toolName?: string;
}

export function latestInput(messages: ChatMessage[]): LatestInput {
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
export function readUserContent(content: string | ChatContentPart[]): {
  said: string;
  attachments: string[];
} {
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
