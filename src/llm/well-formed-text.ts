import type { ModelEvent, TokenLogprob } from './llm.types.js';

const REPLACEMENT = '\uFFFD';

/** Whether the code unit is the first half of a surrogate pair. */
function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * Makes an upstream's streamed text well-formed UTF-16, per channel (the answer, its reasoning,
 * each tool call's arguments). An upstream may send a lone surrogate (`"\ud800"` is valid JSON)
 * or split a pair across two deltas; PostgreSQL's jsonb cannot hold a lone surrogate ("unsupported
 * Unicode escape sequence"), so such a turn could never be stored. A trailing high surrogate
 * waits for its channel's next delta; any surrogate still alone becomes U+FFFD. Repaired here, at
 * the provider, the client is relayed exactly the text the store keeps.
 */
export class WellFormedDeltas {
  /** Per channel: the high surrogate that ended its last delta, and the event it came in (made on first use). */
  private pending: Map<string, { half: string; event: ModelEvent }> | undefined;

  /** The event as it may be relayed, or undefined when all it carried is a held half. */
  take(event: ModelEvent): ModelEvent | undefined {
    switch (event.type) {
      case 'text': {
        const delta = this.text('text', event.delta, event);
        // Log probabilities keep their event even when its text waits for the next one.
        if (event.logprobs) return { ...event, delta, logprobs: event.logprobs.map(wellFormedLogprob) };
        // The event itself when its text needed no repair (nearly always): no copy per token.
        return delta === '' ? undefined : delta === event.delta ? event : { ...event, delta };
      }
      case 'reasoning': {
        const delta = this.text('reasoning', event.delta, event);
        return delta === '' ? undefined : delta === event.delta ? event : { ...event, delta };
      }
      case 'tool_call': {
        const repaired = { ...event };
        if (event.id !== undefined) repaired.id = event.id.toWellFormed();
        if (event.name !== undefined) repaired.name = event.name.toWellFormed();
        if (event.argumentsDelta !== undefined)
          repaired.argumentsDelta = this.text(`tool_call:${event.index}`, event.argumentsDelta, event);
        return repaired;
      }
      default:
        return event;
    }
  }

  /** At the answer's end: a U+FFFD for each half that never got its other one. */
  flush(): ModelEvent[] {
    const owed: ModelEvent[] = [];
    if (this.pending === undefined) return owed;
    for (const { event } of this.pending.values()) {
      if (event.type === 'text' || event.type === 'reasoning')
        owed.push({ type: event.type, delta: REPLACEMENT });
      else if (event.type === 'tool_call')
        owed.push({ type: 'tool_call', index: event.index, argumentsDelta: REPLACEMENT });
    }
    this.pending.clear();
    return owed;
  }

  private text(channel: string, delta: string, event: ModelEvent): string {
    let text = delta;
    // Nothing held (the usual case): no map lookups per token.
    if (this.pending !== undefined && this.pending.size > 0) {
      text = (this.pending.get(channel)?.half ?? '') + delta;
      this.pending.delete(channel);
    }
    if (text.length > 0 && isHighSurrogate(text.charCodeAt(text.length - 1))) {
      (this.pending ??= new Map()).set(channel, { half: text.slice(-1), event });
      text = text.slice(0, -1);
    }
    return text.isWellFormed() ? text : text.toWellFormed();
  }
}

function wellFormedLogprob(entry: TokenLogprob): TokenLogprob {
  return {
    ...entry,
    token: entry.token.toWellFormed(),
    top_logprobs: entry.top_logprobs.map((top) => ({ ...top, token: top.token.toWellFormed() })),
  };
}
