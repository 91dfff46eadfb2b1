import { ChatCompletionChunks, MAX_MALFORMED_EVENTS } from './chat-completion-chunks.js';
import { PassThrough } from 'node:stream';
import { MalformedStreamError, StreamErrorEvent } from './upstream-failure.js';

function streamOf(...reads: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const read of reads) controller.enqueue(encoder.encode(read));
      controller.close();
    },
  });
}

type Body = ConstructorParameters<typeof ChatCompletionChunks>[0];

async function collect(body: Body, reader = new ChatCompletionChunks(body)): Promise<unknown[][]> {
  const batches: unknown[][] = [];
  try {
    // As the answer's attempt reads it: synchronously, waiting only when nothing has arrived.
    for (let batch = reader.read(); batch !== undefined; batch = reader.read())
      if (batch === null) await reader.readable();
      else batches.push(batch);
  } finally {
    reader.release();
  }
  return batches;
}

const chunk = (content: string) => ({ id: 'c1', choices: [{ index: 0, delta: { content } }] });
const event = (content: string, eol = '\n') => `data: ${JSON.stringify(chunk(content))}${eol}${eol}`;

describe('ChatCompletionChunks', () => {
  it('fails, rather than waits forever, on a body destroyed before it is read', async () => {
    const body = new PassThrough();
    body.destroy();
    await new Promise((resolve) => body.once('close', resolve));
    // What undici hands over is a Node Readable; a PassThrough is one.
    const upstreamBody = body as unknown as Body;
    await expect(collect(upstreamBody)).rejects.toThrow(/premature close/i);
  });

  it('yields the chunks each read completed, in one batch per read', async () => {
    const batches = await collect(streamOf(event('a') + event('b'), event('c'), 'data: [DONE]\n\n'));
    expect(batches).toEqual([[chunk('a'), chunk('b')], [chunk('c')]]);
  });

  it('reassembles events split at every possible byte', async () => {
    const whole = event('Hello') + ': keep-alive\n\n' + event('wörld') + 'data: [DONE]\n\n';
    const bytes = new TextEncoder().encode(whole);
    for (let cut = 1; cut < bytes.length; cut++) {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes.slice(0, cut));
          controller.enqueue(bytes.slice(cut));
          controller.close();
        },
      });
      expect((await collect(body)).flat()).toEqual([chunk('Hello'), chunk('wörld')]);
    }
  });

  it('accepts CRLF line ends, event names, comments and data split over several lines', async () => {
    const multiLine = `event: message\r\ndata: {"id":"c1",\r\ndata: "choices":[]}\r\n\r\n`;
    const batches = await collect(
      streamOf(': hello\r\n\r\n' + event('x', '\r\n') + multiLine, 'data:[DONE]\r\n\r\n'),
    );
    expect(batches).toEqual([[chunk('x'), { id: 'c1', choices: [] }]]);
  });

  it('stops at [DONE] and ignores anything after it', async () => {
    const batches = await collect(streamOf(event('a') + 'data: [DONE]\n\n' + event('ignored')));
    expect(batches).toEqual([[chunk('a')]]);
  });

  it('throws when the upstream reports an error inside the stream', async () => {
    const failing = streamOf(event('a'), 'data: {"error":{"message":"overloaded"}}\n\n');
    await expect(collect(failing)).rejects.toThrow('The upstream reported an error in the stream');
  });

  it('skips malformed events and counts them; notes whether [DONE] came', async () => {
    const body = streamOf(
      event('a') + 'data: {"broken\n\n' + 'data: 42\n\n' + event('b') + 'data: [DONE]\n\n',
    );
    const reader = new ChatCompletionChunks(body);
    expect(await collect(body, reader)).toEqual([[chunk('a'), chunk('b')]]);
    expect({ done: reader.done, malformed: reader.malformed }).toEqual({ done: true, malformed: 2 });
  });

  it('abandons a stream of mostly malformed events, and ends at an error event', async () => {
    const garbage = 'data: nope\n\n'.repeat(MAX_MALFORMED_EVENTS + 1);
    await expect(collect(streamOf(garbage))).rejects.toBeInstanceOf(MalformedStreamError);
    await expect(
      collect(streamOf(event('a') + 'data: {"error":{"message":"overloaded"}}\n\n')),
    ).rejects.toBeInstanceOf(StreamErrorEvent);
  });
});
