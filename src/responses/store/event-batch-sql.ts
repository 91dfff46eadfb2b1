/**
 * A background turn's stream events as its statements store them: one `response_event_batches`
 * row per batch (the final write's, turn-end-sql.ts and turn-complete-sql.ts, and a flush's,
 * TurnLedger.appendEvents).
 */

/** A stream event as a background turn stores it: `data` is its JSON text exactly as sent. */
export interface EventText {
  sequenceNumber: number;
  data: string;
}

/** A batch's `events` column: one JSON array of the events' texts as sent. */
export function eventBatchText(events: EventText[]): string {
  return `[${events.map((event) => event.data).join(',')}]`;
}

export const EVENT_BATCH_KEYS = ['firstSequences', 'lastSequences', 'eventBatches'] as const;
type EventBatchKey = (typeof EVENT_BATCH_KEYS)[number];

/**
 * A background turn's events not yet stored (the final ones, and any batch a refused flush kept),
 * one `response_event_batches` row per batch, in the statement of its final write (after the CTE
 * `response`): stored with the final row, or, for a turn cancelled or swept meanwhile, not at all.
 * A batch already stored (a flush whose commit answer was lost) is skipped by its key; a turn's
 * events have one writer, so nothing stores one concurrently.
 */
export function eventBatchesCte(p: Record<EventBatchKey, string>): string {
  return `stored_events AS (
    INSERT INTO response_event_batches (response_id, first_sequence, last_sequence, events)
    SELECT response.id, b.first_sequence, b.last_sequence, b.events::json
      FROM response, unnest(${p.firstSequences}::int[], ${p.lastSequences}::int[], ${p.eventBatches}::text[])
                     AS b(first_sequence, last_sequence, events)
     WHERE NOT EXISTS (SELECT 1 FROM response_event_batches s
                        WHERE s.response_id = response.id AND s.first_sequence = b.first_sequence)
  )`;
}

/** The values of EVENT_BATCH_KEYS for a list of batches. */
export function eventBatchValues(batches: EventText[][]): Record<EventBatchKey, unknown> {
  return {
    firstSequences: batches.map((batch) => batch[0].sequenceNumber),
    lastSequences: batches.map((batch) => batch[batch.length - 1].sequenceNumber),
    eventBatches: batches.map(eventBatchText),
  };
}
