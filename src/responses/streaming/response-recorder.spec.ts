import { ResponseRecorder, type EventSink } from './response-recorder.js';

/** Records each event as the `data:` text a client reads. */
class ObjectSink implements EventSink {
  readonly frames: string[] = [];
  event(type: string, payload: Record<string, unknown>): void {
    this.frames.push(`${type} ${JSON.stringify(payload)}`);
  }
  cork(): void {}
  uncork(): void {}
  drain(): undefined {
    return undefined;
  }
}

class JsonSink extends ObjectSink {
  /** The per-token events written as text, each with the sequence number it was given. */
  readonly written: { type: string; sequence: number; parsed: number }[] = [];
  eventJson(type: string, sequence: number, json: string): void {
    this.written.push({
      type,
      sequence,
      parsed: (JSON.parse(json) as { sequence_number: number }).sequence_number,
    });
    this.frames.push(`${type} ${json}`);
  }
}

function play(recorder: ResponseRecorder): void {
  recorder.reasoning('Thinking "hard" \\ about\n it');
  recorder.text('Hé');
  recorder.text(' \u2028wörld 😀 \ud800</script>');
  recorder.text('!', [{ token: '!', logprob: -0.1, bytes: [33], top_logprobs: [] }]);
  const call = recorder.beginFunctionCall('call_1', 'lookup');
  recorder.functionCallArguments(call, '{"q":');
  recorder.functionCallArguments(call, '"x\\"y"}');
  recorder.finishFunctionCalls();
  recorder.text('again');
  recorder.endMessage();
}

describe('ResponseRecorder', () => {
  it('writes the per-token events as JSON text byte for byte as the serialized objects', () => {
    const objects = new ObjectSink();
    const json = new JsonSink();
    play(new ResponseRecorder(objects));
    play(new ResponseRecorder(json));
    const withoutIds = (frames: string[]) =>
      frames.map((frame) => frame.replace(/(msg|rs|fc)_[0-9a-f]{32}/g, 'id'));
    expect(json.frames.length).toBeGreaterThan(10);
    expect(withoutIds(json.frames)).toEqual(withoutIds(objects.frames));
    // The text path was taken (every delta of the play above but the one with logprobs), each
    // carrying its own number.
    const deltas = json.written.map((event) => event.type);
    expect(deltas.filter((type) => type === 'response.output_text.delta')).toHaveLength(3);
    expect(deltas.filter((type) => type === 'response.function_call_arguments.delta')).toHaveLength(2);
    for (const event of json.written) expect(event.parsed).toBe(event.sequence);
  });

  it('writes a Response event with the given JSON text byte for byte as the serialized object', () => {
    const response = { id: 'resp_1', status: 'completed', output_text: 'Hé "x" \u2028', usage: null };
    const objects = new ObjectSink();
    const json = new JsonSink();
    for (const sink of [objects, json]) {
      const recorder = new ResponseRecorder(sink);
      recorder.emitResponse('response.created', response, JSON.stringify(response));
      recorder.text('Hi');
      recorder.emitResponse('response.completed', response, JSON.stringify(response));
    }
    const withoutIds = (frames: string[]) => frames.map((frame) => frame.replace(/msg_[0-9a-f]{32}/g, 'id'));
    expect(withoutIds(json.frames)).toEqual(withoutIds(objects.frames));
    expect(json.written.map((event) => event.parsed)).toEqual([0, 3, 4]);
  });
});
