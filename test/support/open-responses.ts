import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { HOSTED_ITEM_TYPES, HOSTED_TOOL_TYPES, hostedProblems } from './open-responses-hosted.js';
import type { SseEvent } from './sse.js';

/**
 * One shared assertion against the vendored Open Responses specification
 * (test/fixtures/open-responses, see its README): a Response object, an output or input item,
 * and every event of a stream must match the specification's schemas. The error names the
 * failing path and keyword, so a missing field reads as `/completed_at must have required
 * property …`.
 */

type Json = Record<string, any>;

const DOCUMENT_PATH = fileURLToPath(new URL('../fixtures/open-responses/openapi.json', import.meta.url));
const BASE = 'https://openresponses.invalid/openapi.json';

/** Event types the interface contract (spec section 6) adds; the specification has no schema for them. */
export const CONTRACT_ONLY_EVENT_TYPES: readonly string[] = [
  'response.status',
  'response.error',
  'response.web_search_call.in_progress',
  'response.web_search_call.searching',
  'response.web_search_call.completed',
];

/** Output item types the interface contract adds (handover, OAuth prompt). */
export const CONTRACT_ONLY_ITEM_TYPES: readonly string[] = ['handover', 'oauth_required'];

interface Compiled {
  ajv: Ajv2020;
  response: ValidateFunction;
  item: ValidateFunction;
  compaction: ValidateFunction;
  /** Event type → validator of that event's schema, read from the document's stream union. */
  events: Map<string, ValidateFunction>;
}

let compiled: Compiled | undefined;

function schemas(): Compiled {
  if (compiled) return compiled;
  const document = JSON.parse(readFileSync(DOCUMENT_PATH, 'utf8')) as Json;
  withFileCitations(document.components.schemas);
  // OpenAPI keywords (discriminator, x-*, example) are annotations here: strict mode off.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ ...document, $id: BASE });
  const at = (name: string) => ajv.compile({ $ref: `${BASE}#/components/schemas/${name}` });
  const stream = document.paths['/responses'].post.responses['200'].content['text/event-stream'].schema;
  const events = new Map<string, ValidateFunction>();
  for (const { $ref } of stream.oneOf as { $ref: string }[]) {
    const name = $ref.split('/').pop()!;
    for (const type of document.components.schemas[name].properties.type.enum as string[])
      events.set(type, at(name));
  }
  compiled = {
    ajv,
    response: at('ResponseResource'),
    item: at('ItemField'),
    compaction: at('CompactResource'),
    events,
  };
  return compiled;
}

/**
 * Later releases of the specification add the file citation to the annotations of output text
 * (`Annotation` = `FileCitationBody` | `UrlCitationBody`; the vendored document has URL citations
 * only): what file_search answers carry (docs/knowledge.md, "Citations").
 */
function withFileCitations(components: Json): void {
  components.FileCitationBody = {
    type: 'object',
    required: ['type', 'file_id', 'index', 'filename'],
    properties: {
      type: { type: 'string', enum: ['file_citation'] },
      file_id: { type: 'string' },
      index: { type: 'integer' },
      filename: { type: 'string' },
    },
  };
  components.Annotation.oneOf = [
    { $ref: '#/components/schemas/FileCitationBody' },
    ...components.Annotation.oneOf,
  ];
}

function problems(validate: ValidateFunction, value: unknown): string[] {
  if (validate(value)) return [];
  // allErrors reports every oneOf branch; keep the distinct messages, shortest paths first.
  const seen = new Set<string>();
  for (const error of validate.errors ?? []) {
    const extra = error.keyword === 'required' ? '' : ` (${JSON.stringify(error.params)})`;
    seen.add(`${error.instancePath || '/'} ${error.message}${extra}`);
  }
  return [...seen].sort((a, b) => a.length - b.length);
}

const isHostedChoice = (choice: unknown) => HOSTED_TOOL_TYPES.includes((choice as Json)?.type);

/**
 * The contract's own output items are taken out before the check (they are not in the
 * specification), and so are the hosted search tools, choices and items of later releases
 * (checked by open-responses-hosted.ts instead).
 */
function withoutContractItems(response: Json): Json {
  if (!Array.isArray(response?.output)) return response;
  const set = { ...response };
  set.output = response.output.filter(
    (item: Json) => ![...CONTRACT_ONLY_ITEM_TYPES, ...HOSTED_ITEM_TYPES].includes(item?.type),
  );
  if (Array.isArray(response.tools))
    set.tools = response.tools.filter((tool: Json) => !HOSTED_TOOL_TYPES.includes(tool?.type));
  if (isHostedChoice(response.tool_choice)) set.tool_choice = 'required';
  return set;
}

/** What the hosted search parts of a Response get wrong, by the later releases' schemas. */
function hostedResponseProblems(response: Json): string[] {
  const found: string[] = [];
  (Array.isArray(response?.output) ? response.output : []).forEach((item: Json, index: number) => {
    if (HOSTED_ITEM_TYPES.includes(item?.type))
      found.push(...hostedProblems(item.type, item, `/output/${index}`));
  });
  (Array.isArray(response?.tools) ? response.tools : []).forEach((tool: Json, index: number) => {
    if (HOSTED_TOOL_TYPES.includes(tool?.type))
      found.push(...hostedProblems(tool.type, tool, `/tools/${index}`));
  });
  if (isHostedChoice(response?.tool_choice))
    found.push(...hostedProblems('tool_choice', response.tool_choice, '/tool_choice'));
  return found;
}

/** What is wrong with a Response object by the specification; empty when it matches. */
export function responseProblems(response: unknown): string[] {
  return [
    ...problems(schemas().response, withoutContractItems(response as Json)),
    ...hostedResponseProblems(response as Json),
  ];
}

/** What is wrong with one output or input item (message, function_call, …); empty when it matches. */
export function itemProblems(item: unknown): string[] {
  const type = (item as Json)?.type;
  if (CONTRACT_ONLY_ITEM_TYPES.includes(type)) return [];
  if (HOSTED_ITEM_TYPES.includes(type)) return hostedProblems(type, item, '');
  return problems(schemas().item, item);
}

/** What is wrong with one streamed event payload (its JSON `data`); empty when it matches. */
export function eventProblems(event: Json): string[] {
  const type = event?.type;
  if (typeof type !== 'string') return ['/type is missing'];
  if (!Number.isInteger(event.sequence_number)) return ['/sequence_number is missing'];
  if (CONTRACT_ONLY_EVENT_TYPES.includes(type)) return [];
  if (CONTRACT_ONLY_ITEM_TYPES.includes(event.item?.type)) return [];
  if (HOSTED_ITEM_TYPES.includes(event.item?.type))
    return hostedProblems(event.item.type, event.item, '/item');
  const validate = schemas().events.get(type);
  if (!validate) return [`event type ${type} is not in the specification`];
  const payload = event.response ? { ...event, response: withoutContractItems(event.response) } : event;
  return problems(validate, payload);
}

function fail(what: string, found: string[]): never {
  throw new Error(`${what} does not match the Open Responses schema:\n  ${found.join('\n  ')}`);
}

export function expectValidResponse(response: unknown): void {
  const found = responseProblems(response);
  if (found.length) fail(`Response ${(response as Json)?.id ?? ''}`.trim(), found);
}

/** POST /v1/responses/compact's reply (`CompactResource`). */
export function expectValidCompaction(compaction: unknown): void {
  const found = problems(schemas().compaction, compaction);
  if (found.length) fail(`Compaction ${(compaction as Json)?.id ?? ''}`.trim(), found);
}

export function expectValidItem(item: unknown): void {
  const found = itemProblems(item);
  if (found.length) fail(`Item ${(item as Json)?.id ?? ''}`.trim(), found);
}

/**
 * Every event of a stream (parsed SSE events as `parseSse` gives them, or the SDK's event
 * objects): each must match its schema, the SSE `event:` name must equal the payload's
 * `type`, and `sequence_number` must run 0, 1, 2… The `[DONE]` sentinel is skipped.
 */
export function expectValidStreamEvents(events: readonly (SseEvent | Json)[]): void {
  const found: string[] = [];
  let sequence = 0;
  events.forEach((entry, index) => {
    const sse = 'data' in entry && typeof entry.data === 'string' ? (entry as SseEvent) : undefined;
    if (sse?.data === '[DONE]') return;
    const payload = (sse ? sse.json : entry) as Json | undefined;
    if (!payload) return void found.push(`event #${index}: data is not JSON`);
    const label = `event #${index} (${payload.type})`;
    if (sse?.event !== undefined && sse.event !== payload.type)
      found.push(`${label}: SSE name ${sse.event} differs from its type`);
    if (payload.sequence_number !== sequence)
      found.push(`${label}: sequence_number ${payload.sequence_number}, expected ${sequence}`);
    sequence = (Number.isInteger(payload.sequence_number) ? payload.sequence_number : sequence) + 1;
    for (const problem of eventProblems(payload)) found.push(`${label}: ${problem}`);
  });
  if (events.length === 0) found.push('no events');
  if (found.length) fail('Stream', found);
}
