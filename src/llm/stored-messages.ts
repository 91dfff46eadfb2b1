import type { ChatMessage, ModelRequest, StoredHistory } from './llm.types.js';

/**
 * Messages of earlier turns kept as the JSON text the database returned them in: the elements of
 * a JSON array, comma-separated, without the brackets ('' for none). A continued turn sends them
 * to the upstream as that text (OpenAiCompatibleProvider); only what reads them one by one (the
 * context-window trim, the offline model, compaction, the Conversations API) parses them, once.
 * Parsing 200 stored turns into objects and the SDK stringifying them again was half of what the
 * service allocated for a 200-turn thread, and the objects lived as long as the turn's stream
 * (docs/benchmarks.md, round "threadturn").
 */
export class StoredMessages implements StoredHistory {
  static readonly NONE = new StoredMessages('');
  #parsed: ChatMessage[] | undefined;

  private constructor(readonly json: string) {}

  /** The messages of JSON arrays as text (each `[…]`, as PostgreSQL's jsonb output writes them). */
  static fromArrays(arrays: readonly string[]): StoredMessages {
    const elements: string[] = [];
    for (const array of arrays) if (array.length > 2) elements.push(array.slice(1, -1));
    return elements.length === 0 ? StoredMessages.NONE : new StoredMessages(elements.join(', '));
  }

  /** Messages already in memory (tests, and threads not read from the database). */
  static of(messages: readonly ChatMessage[]): StoredMessages {
    return StoredMessages.fromArrays([JSON.stringify(messages)]);
  }

  get empty(): boolean {
    return this.json === '';
  }

  /**
   * The most messages the text can hold without counting them: every stored message has a role,
   * so each takes at least `{"role": ""}` (12 characters) and a separator (2).
   */
  get atMost(): number {
    return this.json === '' ? 0 : Math.floor((this.json.length + 2) / 14);
  }

  /** The messages as objects, parsed on the first call (the same array on every call). */
  messages(): ChatMessage[] {
    this.#parsed ??= this.json === '' ? [] : (JSON.parse(`[${this.json}]`) as ChatMessage[]);
    return this.#parsed;
  }
}

/** Every message of a model call as objects, the stored history parsed into its place. */
export function allMessages(request: ModelRequest): ChatMessage[] {
  const history = request.history;
  if (!history) return request.messages;
  const { messages } = request;
  return [...messages.slice(0, history.at), ...history.stored.messages(), ...messages.slice(history.at)];
}
