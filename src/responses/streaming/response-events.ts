import { randomUUID } from 'node:crypto';

/**
 * Which event names a client gets where dialects differ: `response.status` (the contract's, which
 * the official SDKs reject) and the reasoning text events (`response.reasoning_text.*` in OpenAI's
 * SDKs, `response.reasoning.*` in the Open Responses specification).
 */
export interface EventStyle {
  status: boolean;
  reasoning: 'response.reasoning_text' | 'response.reasoning';
}

export const DEFAULT_EVENT_STYLE: EventStyle = { status: true, reasoning: 'response.reasoning' };

/** Where a streamed response's events go; writing is synchronous, see SseWriter. */
export interface EventSink {
  event(type: string, payload: Record<string, unknown>): void;
  /**
   * The same event with its payload already JSON text, exactly `JSON.stringify` of what `event`
   * would get. Optional: the recorder uses it for the per-token events when the sink has it.
   */
  eventJson?(type: string, sequence: number, json: string): void;
  cork(): void;
  uncork(): void;
  /** Undefined when more can be written now; otherwise resolves when it can. */
  drain(): Promise<void> | undefined;
}

export function itemId(prefix: 'msg' | 'fc' | 'hov' | 'oar' | 'ws' | 'fs' | 'rs'): string {
  return `${prefix}_${randomUUID().replaceAll('-', '')}`;
}

/**
 * The JSON of a delta event's fields between `sequence_number` and `delta`, built once per item:
 * a token then costs one string, not three objects and a `JSON.stringify` (see `delta`).
 */
export function deltaIds(itemId: string, outputIndex: number, contentIndex: boolean): string {
  // Joined, not a template: one flat string, where a template leaves a tree of five pieces that
  // the stream holds, and each token's event walks, until the item ends.
  return [
    ',"item_id":',
    JSON.stringify(itemId),
    ',"output_index":',
    outputIndex,
    contentIndex ? ',"content_index":0' : '',
    ',"delta":',
  ].join('');
}

/** `{"type":…,"sequence_number":` of each delta event type, serialized once per process. */
const deltaHeads = new Map<string, string>();

function deltaHead(type: string): string {
  let head = deltaHeads.get(type);
  if (head === undefined) {
    head = `{"type":${JSON.stringify(type)},"sequence_number":`;
    deltaHeads.set(type, head);
  }
  return head;
}

/**
 * The event side of a response being recorded: numbers every event (`sequence_number`), writes
 * it to the sink (none for a JSON reply), batches writes and passes back-pressure on.
 * ResponseRecorder builds the output on top of it.
 */
export class ResponseEvents {
  private sequence = 0;
  /** Whether the sink takes pre-serialized per-token events (`delta`). */
  protected readonly writesJson: boolean;

  constructor(
    private readonly sink: EventSink | undefined,
    protected readonly style: EventStyle = DEFAULT_EVENT_STYLE,
  ) {
    this.writesJson = sink?.eventJson !== undefined;
  }

  /** Whether events reach someone as they happen (a stream, a background turn), not only at the end. */
  get live(): boolean {
    return this.sink !== undefined;
  }

  emit(type: string, payload: Record<string, unknown>): void {
    this.sink?.event(type, { type, sequence_number: this.sequence++, ...payload });
  }

  /**
   * An event whose payload is the whole Response (`response.created`, `response.completed`...)
   * with the Response's JSON text already made (the stored body's, or shared by two events):
   * spliced into the event's text, byte for byte what `emit` would serialize, instead of
   * serializing the Response again. `json` must be `JSON.stringify(response)`.
   */
  emitResponse(type: string, response: object, json: string): void {
    if (!this.writesJson) return this.emit(type, { response });
    const sequence = this.sequence++;
    this.sink?.eventJson?.(
      type,
      sequence,
      `{"type":${JSON.stringify(type)},"sequence_number":${sequence},"response":${json}}`,
    );
  }

  /**
   * A delta event as JSON text, byte for byte what `emit` would serialize: `type`,
   * `sequence_number`, the item's ids, `delta`, then `tail` (the fields after it).
   */
  protected delta(type: string, ids: string, delta: string, tail: string): void {
    const sequence = this.sequence++;
    this.sink?.eventJson?.(
      type,
      sequence,
      `${deltaHead(type)}${sequence}${ids}${JSON.stringify(delta)}${tail}`,
    );
  }

  /**
   * The events emitted until `uncork()` go out in one socket write; the turn's per-read loop
   * calls these in a try/finally (no closure per read).
   */
  cork(): void {
    this.sink?.cork();
  }

  uncork(): void {
    this.sink?.uncork();
  }

  /** Undefined when the client keeps up; otherwise resolves when it has read enough. */
  drain(): Promise<void> | undefined {
    return this.sink?.drain();
  }

  /** `response.status`, unless the client is an official SDK that rejects unknown events. */
  status(code: string, message: string, metadata: Record<string, unknown>): void {
    if (this.style.status) this.emit('response.status', { code, message, metadata });
  }
}
