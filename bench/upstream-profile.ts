/**
 * How the fake upstream behaves for one model name. The profile is encoded in the model name
 * (`bench-t20-n200-i10-tool`) so that one upstream process serves every scenario, the service
 * forwards it unchanged, and a scenario is fully described by the assistant it addresses.
 */
export interface UpstreamProfile {
  /** Time from the request to the first token, in ms. */
  ttftMs: number;
  /** Text tokens in the reply (one Chat Completions chunk each). */
  tokens: number;
  /** Pause between tokens in ms; 0 writes the whole reply at once (fastest possible upstream). */
  intervalMs: number;
  /** The first call of a conversation asks for the `get_weather` function; the reply follows its output. */
  toolCall: boolean;
}

export function profileModel(profile: UpstreamProfile): string {
  return `bench-t${profile.ttftMs}-n${profile.tokens}-i${profile.intervalMs}${profile.toolCall ? '-tool' : ''}`;
}

const MODEL = /^bench-t(\d+(?:\.\d+)?)-n(\d+)-i(\d+(?:\.\d+)?)(-tool)?$/;

export function parseProfileModel(model: string): UpstreamProfile | null {
  const match = MODEL.exec(model);
  if (!match) return null;
  return {
    ttftMs: Number(match[1]),
    tokens: Math.max(1, Number(match[2])),
    intervalMs: Number(match[3]),
    toolCall: match[4] !== undefined,
  };
}

const WORDS = [
  'The',
  'quick',
  'relay',
  'carries',
  'every',
  'token',
  'from',
  'the',
  'model',
  'to',
  'the',
  'caller',
  'without',
  'delay',
  'and',
  'stores',
  'each',
  'turn',
  'safely',
  'today',
];

/** Token `index` of a reply: a word, with a leading space after the first. */
export function tokenText(index: number): string {
  const word = WORDS[index % WORDS.length];
  return index === 0 ? word : ` ${word}`;
}

export function replyText(tokens: number): string {
  let text = '';
  for (let index = 0; index < tokens; index++) text += tokenText(index);
  return text;
}

export const BENCH_TOOL = {
  name: 'get_weather',
  description: 'Current weather of a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
    required: ['city'],
  },
} as const;

/** The arguments the fake model streams for its function call, in the fragments it sends. */
export const TOOL_ARGUMENT_FRAGMENTS = ['{"city":', '"Paris",', '"unit":"celsius"}'];
export const TOOL_OUTPUT = '{"temperature_c":21,"sky":"clear"}';
