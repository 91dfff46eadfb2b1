import type { RecordedRequest } from './support/fake-upstream.js';
import { HeldTurns } from './support/held-turns.js';
import { parseSse, postStream } from './support/sse.js';

/**
 * Two turns of one conversation that overlap, the older one ending last (docs/architecture.md,
 * "A conversation's head"): the newer turn stays the head the next turn continues, whether the
 * turns are streamed (a start row, then `turn_save`), JSON (`turn_insert`, no start row) or run in
 * the background.
 */
describe('overlapping turns of one conversation', () => {
  const held = new HeldTurns();
  const ann = 'ann';

  beforeAll(() => held.start('turn-overlap'));
  afterAll(() => held.close());

  /** The user and assistant messages a model call was sent. */
  const dialogue = (request: RecordedRequest): string[] =>
    (request.body.messages as { role: string; content: unknown }[])
      .filter((message) => message.role === 'user' || message.role === 'assistant')
      .map((message) => `${message.role}: ${String(message.content)}`);

  /** What the model is sent when the conversation is continued with a new question. */
  async function continued(conversation: string): Promise<string[]> {
    const next = await held.turn(ann, { input: 'question C', conversation }, 'answer C');
    expect(next.status).toBe(200);
    return dialogue(held.upstream.last);
  }

  const FIRST = ['user: first question', 'assistant: first answer'];
  const A = ['user: question A', 'assistant: answer A'];
  const B = ['user: question B', 'assistant: answer B'];
  const C = 'user: question C';

  it('streamed: the older turn ending last leaves the newer one the head, both in its thread', async () => {
    const conversation = await held.conversation(ann);
    const a = await held.heldStream(ann, conversation);
    // A's start row made it the head: B continues from it.
    held.upstream.script({ text: 'answer B' });
    const b = await postStream(
      held.app.baseUrl,
      held.org.keys.full_access,
      { model: held.model, input: 'question B', conversation },
      { 'x-user-id': ann },
    );
    expect(b.events.map((event) => event.event)).toContain('response.completed');
    a.release();
    const endA = parseSse(await a.stream.rest()).events.map((event) => event.event);
    expect(endA).toContain('response.completed');

    expect(await continued(conversation)).toEqual([...FIRST, ...A, ...B, C]);
    const items = await held.call(ann, 'GET', `/v1/conversations/${conversation}/items?order=asc`);
    const texts = JSON.stringify(items.body);
    for (const text of ['question A', 'answer A', 'question B', 'answer B']) expect(texts).toContain(text);
  });

  it('JSON: the newer turn stays the head when the older one ends last', async () => {
    const conversation = await held.conversation(ann);
    const a = await held.heldTurn(ann, conversation);
    // A JSON turn leaves no row before its end: B starts from the same turn as A, a branch beside it.
    const b = await held.turn(ann, { input: 'question B', conversation }, 'answer B');
    expect(b.status).toBe(200);
    a.release();
    expect((await a.reply).body.output_text).toBe('answer A');

    expect(await continued(conversation)).toEqual([...FIRST, ...B, C]);
  });

  it('background: the older turn ending last leaves the newer one the head, both in its thread', async () => {
    const conversation = await held.conversation(ann);
    const a = await held.heldTurn(ann, conversation, true);
    const started = await a.reply;
    expect(started.status).toBe(200);
    const b = await held.turn(ann, { input: 'question B', conversation }, 'answer B');
    expect(b.status).toBe(200);
    a.release();
    expect((await held.finished(ann, started.body.id as string)).status).toBe('completed');

    expect(await continued(conversation)).toEqual([...FIRST, ...A, ...B, C]);
  });
});
