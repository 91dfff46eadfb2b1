import type { TokenLogprob } from '../../llm/llm.types.js';
import type { OutputItem, OutputTextPart, ReasoningTextPart } from '../../turns/output-item.types.js';
import { fileCitations, type SearchedPassage } from '../../turns/file-citations.js';
import { outputTextOf } from '../../turns/output-text.js';
import {
  DEFAULT_EVENT_STYLE,
  deltaIds,
  itemId,
  ResponseEvents,
  type EventSink,
  type EventStyle,
} from './response-events.js';

// The event types live with the event side; re-exported so importers keep one place to import from.
export { DEFAULT_EVENT_STYLE, itemId, type EventSink, type EventStyle } from './response-events.js';

/** Shared by every text delta without log probabilities: serialized, never mutated. */
const NO_LOGPROBS: readonly never[] = Object.freeze([]);

interface OpenItem<T extends OutputItem['type']> {
  index: number;
  item: Extract<OutputItem, { type: T }>;
}

/**
 * Builds a response's `output` and, when streaming, emits the matching events (ResponseEvents) in
 * the order the spec and the official SDK's stream helper require: every event carries
 * `sequence_number`; item events carry `output_index` (the append position) and `item_id`.
 */
export class ResponseRecorder extends ResponseEvents {
  readonly output: OutputItem[] = [];
  private openMessage: (OpenItem<'message'> & { deltaIds: string }) | undefined;
  private openReasoning: (OpenItem<'reasoning'> & { deltaIds: string }) | undefined;
  private readonly openCalls: (OpenItem<'function_call'> & { deltaIds: string })[] = [];
  /** Every passage file_search gave the model so far in this response: what a message may cite. */
  private readonly searched: SearchedPassage[] = [];

  /** Event names of reasoning text, fixed per stream (computed once, not per token). */
  private readonly reasoningDelta: string;
  private readonly reasoningDone: string;

  constructor(sink: EventSink | undefined, style: EventStyle = DEFAULT_EVENT_STYLE) {
    super(sink, style);
    this.reasoningDelta = `${style.reasoning}.delta`;
    this.reasoningDone = `${style.reasoning}.done`;
  }

  get outputText(): string {
    return outputTextOf(this.output);
  }

  text(delta: string, logprobs?: TokenLogprob[]): void {
    if (delta.length === 0) return;
    let open = this.openMessage;
    if (!open) {
      this.endReasoning();
      const item: Extract<OutputItem, { type: 'message' }> = {
        type: 'message',
        id: itemId('msg'),
        status: 'in_progress',
        role: 'assistant',
        content: [],
      };
      const part: OutputTextPart = { type: 'output_text', text: '', annotations: [], logprobs: [] };
      open = this.openContent(item, part, { ...part, logprobs: [] });
      this.openMessage = open;
    }
    const part = open.item.content[0];
    part.text += delta;
    if (logprobs) part.logprobs.push(...logprobs);
    else if (this.writesJson)
      return this.delta('response.output_text.delta', open.deltaIds, delta, ',"logprobs":[]}');
    this.emit('response.output_text.delta', {
      item_id: open.item.id,
      output_index: open.index,
      content_index: 0,
      delta,
      logprobs: logprobs ?? NO_LOGPROBS,
    });
  }

  /** Reasoning text, as reasoning models stream it before they answer. */
  reasoning(delta: string): void {
    if (delta.length === 0) return;
    let open = this.openReasoning;
    if (!open) {
      this.endMessage();
      const item: Extract<OutputItem, { type: 'reasoning' }> = {
        type: 'reasoning',
        id: itemId('rs'),
        status: 'in_progress',
        summary: [],
        content: [],
      };
      const part: ReasoningTextPart = { type: 'reasoning_text', text: '' };
      open = this.openContent(item, part, { ...part });
      this.openReasoning = open;
    }
    open.item.content[0].text += delta;
    if (this.writesJson) return this.delta(this.reasoningDelta, open.deltaIds, delta, '}');
    this.emit(this.reasoningDelta, {
      item_id: open.item.id,
      output_index: open.index,
      content_index: 0,
      delta,
    });
  }

  /**
   * Appends a message or reasoning item with its one content part and announces both; `shown` is
   * the part as the event carries it (a copy: the part itself keeps growing).
   */
  private openContent<T extends Extract<OutputItem, { type: 'message' | 'reasoning' }>>(
    item: T,
    part: T['content'][number],
    shown: object,
  ): OpenItem<T['type']> & { deltaIds: string } {
    const index = this.output.push(item) - 1;
    this.emit('response.output_item.added', { output_index: index, item: { ...item, content: [] } });
    (item.content as T['content'][number][]).push(part);
    this.emit('response.content_part.added', {
      item_id: item.id,
      output_index: index,
      content_index: 0,
      part: shown,
    });
    return {
      index,
      item: item as Extract<OutputItem, { type: T['type'] }>,
      deltaIds: deltaIds(item.id, index, true),
    };
  }

  private endReasoning(status: 'completed' | 'incomplete' = 'completed'): void {
    const open = this.openReasoning;
    if (!open) return;
    this.openReasoning = undefined;
    open.item.status = status;
    const ids = { item_id: open.item.id, output_index: open.index, content_index: 0 };
    this.emit(this.reasoningDone, { ...ids, text: open.item.content[0].text });
    this.emit('response.content_part.done', { ...ids, part: open.item.content[0] });
    this.emit('response.output_item.done', { output_index: open.index, item: open.item });
  }

  /**
   * Closes the message (or reasoning) being written, if any (before a tool call, or at the end);
   * `incomplete` when the output limit cut it.
   */
  endMessage(status: 'completed' | 'incomplete' = 'completed'): void {
    this.endReasoning(status);
    const open = this.openMessage;
    if (!open) return;
    this.openMessage = undefined;
    open.item.status = status;
    const part = open.item.content[0];
    const text = part.text;
    part.annotations = fileCitations(text, this.searched);
    for (const [annotationIndex, annotation] of part.annotations.entries()) {
      this.emit('response.output_text.annotation.added', {
        item_id: open.item.id,
        output_index: open.index,
        content_index: 0,
        annotation_index: annotationIndex,
        annotation,
      });
    }
    this.emit('response.output_text.done', {
      item_id: open.item.id,
      output_index: open.index,
      content_index: 0,
      text,
      logprobs: open.item.content[0].logprobs,
    });
    this.emit('response.output_item.done', { output_index: open.index, item: open.item });
  }

  /** Opens a client-side function call item; returns its handle for argument fragments. */
  beginFunctionCall(callId: string, name: string): number {
    const item: Extract<OutputItem, { type: 'function_call' }> = {
      type: 'function_call',
      id: itemId('fc'),
      call_id: callId,
      name,
      arguments: '',
      status: 'in_progress',
    };
    const index = this.openItem(item);
    this.openCalls.push({ index, item, deltaIds: deltaIds(item.id, index, false) });
    return index;
  }

  /** Appends and announces an item filled in later (a function call, a search); returns its index. */
  openItem(item: OutputItem): number {
    this.endMessage();
    const index = this.output.push(item) - 1;
    this.emit('response.output_item.added', { output_index: index, item: { ...item } });
    return index;
  }

  /** Passages a file search gave the model: what the messages written after it may cite. */
  cite(passages: SearchedPassage[]): void {
    this.searched.push(...passages);
  }

  functionCallArguments(handle: number, delta: string): void {
    const open = this.openCalls.find((call) => call.index === handle);
    if (!open || delta.length === 0) return;
    open.item.arguments += delta;
    if (this.writesJson) {
      return this.delta('response.function_call_arguments.delta', open.deltaIds, delta, '}');
    }
    this.emit('response.function_call_arguments.delta', {
      item_id: open.item.id,
      output_index: open.index,
      delta,
    });
  }

  finishFunctionCalls(): void {
    for (const open of this.openCalls.splice(0)) {
      open.item.status = 'completed';
      this.emit('response.function_call_arguments.done', {
        item_id: open.item.id,
        output_index: open.index,
        name: open.item.name,
        call_id: open.item.call_id,
        arguments: open.item.arguments,
      });
      this.emit('response.output_item.done', { output_index: open.index, item: open.item });
    }
  }

  /** An item that is complete when it appears: handover, oauth_required. */
  addItem(item: OutputItem): void {
    this.endMessage();
    const index = this.output.push(item) - 1;
    this.emit('response.output_item.added', { output_index: index, item });
    this.emit('response.output_item.done', { output_index: index, item });
  }

  /** Marks whatever is still open as cut short (client gone, upstream failed). */
  interrupt(): void {
    if (this.openMessage) this.openMessage.item.status = 'incomplete';
    if (this.openReasoning) this.openReasoning.item.status = 'incomplete';
    this.openReasoning = undefined;
    for (const open of this.openCalls) open.item.status = 'incomplete';
    this.openMessage = undefined;
    this.openCalls.length = 0;
  }
}
