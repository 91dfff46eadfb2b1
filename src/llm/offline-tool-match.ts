import type { ModelTool } from './llm.types.js';
import { exampleFor } from './schema-example.js';

/** Words a tool name shares with almost any request, so they never make a match on their own. */
const FILLER = new Set(['get', 'set', 'the', 'a', 'an', 'of', 'for', 'to', 'by', 'do', 'is', 'on', 'in']);

/**
 * The offline model's own judgement under `tool_choice: "auto"`: the first offered function
 * whose name (split on `_`, `-` and camelCase, filler words left out) shares a word with the
 * user's latest message, e.g. `get_weather` for "What's the weather like in Paris?". Arguments
 * follow its parameters schema; free-form strings take the phrase after the last "in"/"at"/
 * "for"/"near" when the message has one ("Paris"), else "example". Deterministic, no guessing
 * beyond that: no shared word, no call.
 */
export function matchingCall(
  tools: ModelTool[],
  message: string,
): { tool: string; arguments: Record<string, unknown> } | undefined {
  const said = new Set((message.toLowerCase().match(/[a-z0-9]+/g) ?? []).map(singular));
  const tool = tools.find((candidate) => nameWords(candidate.name).some((word) => said.has(singular(word))));
  if (!tool) return undefined;
  const args = exampleFor(tool.parameters, placeIn(message) ?? 'example');
  return {
    tool: tool.name,
    arguments:
      typeof args === 'object' && args !== null && !Array.isArray(args)
        ? (args as Record<string, unknown>)
        : {},
  };
}

/** `getCurrentWeather` and `get_current_weather` → ["current", "weather"]. */
export function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 1 && !FILLER.has(word));
}

function singular(word: string): string {
  return word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word;
}

/** "… like in San Francisco?" → "San Francisco": the words after the last place preposition. */
function placeIn(message: string): string | undefined {
  const matches = [...message.matchAll(/\b(?:in|at|for|near)\s+([^?.!,;:\n]+)/gi)];
  const phrase = matches.at(-1)?.[1]?.trim();
  return phrase ? phrase : undefined;
}
