import { AnswerAttempt } from './answer-attempt.js';
import { UpstreamError } from './llm.types.js';

const limits = { headersMs: 10_000, firstTokenMs: 10_000, stallMs: 10_000 };
const event = (content: string) =>
  `data: ${JSON.stringify({ id: 'c1', choices: [{ index: 0, delta: { content } }] })}\n\n`;

/** A body that gives one token, then fails (the connection is cut). */
function cutAfterOneToken(): ReadableStream<Uint8Array> {
  let pulls = 0;
  return new ReadableStream({
    pull(controller) {
      if (pulls++ === 0) controller.enqueue(new TextEncoder().encode(event('hé')));
      else controller.error(new Error('socket hang up'));
    },
  });
}

/** A body that gives one token and waits (an answer still streaming). */
function streaming(): ReadableStream<Uint8Array> {
  let pulls = 0;
  return new ReadableStream({
    pull(controller) {
      if (pulls++ === 0) controller.enqueue(new TextEncoder().encode(event('hé')));
      else return new Promise<void>(() => undefined);
    },
  });
}

/** Reads until the attempt throws or ends; what it threw, or 'completed'. */
async function outcome(attempt: AnswerAttempt): Promise<unknown> {
  try {
    for (;;) {
      if (attempt.read() === undefined) return 'completed';
      await attempt.readable();
    }
  } catch (error) {
    return error;
  }
}

describe('AnswerAttempt', () => {
  it('throws its failure again on every read after it, never reading as a completed answer', async () => {
    const attempt = new AnswerAttempt(limits, new AbortController().signal);
    expect(await attempt.first(() => Promise.resolve(cutAfterOneToken()))).toEqual([
      { type: 'text', delta: 'hé' },
    ]);
    const failure = await outcome(attempt);
    expect(failure).toBeInstanceOf(UpstreamError);
    expect(() => attempt.read()).toThrow(failure as Error);
    expect(() => attempt.read()).toThrow(failure as Error);
  });

  it('never reads as a completed answer once closed before its end', async () => {
    const attempt = new AnswerAttempt(limits, new AbortController().signal);
    await attempt.first(() => Promise.resolve(streaming()));
    attempt.close();
    expect(() => attempt.read()).toThrow(/closed before its end/);
  });
});
