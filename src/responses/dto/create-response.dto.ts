import { ApiError } from '../../common/errors/error-catalogue.js';
import { MAX_USER_ID_LENGTH, parsePrefixedUuid } from '../../common/http/request-params.js';

/**
 * POST /v1/responses, parsed by hand rather than by class-validator because the contract fixes
 * which error a client sees first (spec 7.3): body, required fields, model, tools, input.
 */
export interface CreateResponseDto {
  assistantId: string;
  input: InputItem[];
  previousResponseId: string | null;
  stream: boolean;
  /** Run the turn server-side whatever the client does (docs/api.md, "Background responses"). */
  background: boolean;
  tools: FunctionToolDto[];
  instructions: string | null;
}

export interface FunctionToolDto {
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
  strict?: boolean;
}

export type InputItem =
  | { type: 'message'; role: 'user' | 'assistant' | 'system' | 'developer'; text: string }
  | { type: 'function_call_output'; callId: string; output: string }
  | { type: 'function_call'; callId: string; name: string; arguments: string };

/** The per-request user headers of spec 4.1. */
export interface UserHeaders {
  userId: string | null;
  userToken: string | null;
  userTokens: Record<string, string>;
}

export const MAX_TOOLS = 128;
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MESSAGE_ROLES = new Set(['user', 'assistant', 'system', 'developer']);
const TEXT_PART_TYPES = new Set(['input_text', 'output_text', 'text']);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `asst_<uuid>` or a bare UUID → the bare UUID, or null when it is neither. */
export function parseAssistantId(model: string): string | null {
  return parsePrefixedUuid(model, 'asst_', true);
}

/** `resp_<uuid>` → the bare UUID, or null. */
export function parseResponseId(id: string): string | null {
  return parsePrefixedUuid(id, 'resp_', false);
}

export function parseUserHeaders(headers: Record<string, string | string[] | undefined>): UserHeaders {
  const single = (name: string): string | null => {
    const value = headers[name];
    if (value === undefined) return null;
    if (Array.isArray(value)) throw new ApiError('invalid_request', `Header ${name} must be sent once`);
    return value;
  };
  const userId = single('x-user-id');
  if (userId !== null && (userId.length === 0 || userId.length > MAX_USER_ID_LENGTH)) {
    throw new ApiError('invalid_request', `Header x-user-id must be 1 to ${MAX_USER_ID_LENGTH} characters`);
  }
  const rawTokens = single('x-user-tokens');
  let userTokens: Record<string, string> = {};
  if (rawTokens !== null) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(rawTokens);
    } catch {
      throw new ApiError(
        'invalid_request',
        'Header x-user-tokens must be a JSON object of provider id to token',
      );
    }
    if (!isObject(parsed) || !Object.values(parsed).every((token) => typeof token === 'string')) {
      throw new ApiError(
        'invalid_request',
        'Header x-user-tokens must be a JSON object of provider id to token',
      );
    }
    userTokens = parsed as Record<string, string>;
  }
  return { userId, userToken: single('x-user-token'), userTokens };
}

export function parseCreateResponse(body: unknown): CreateResponseDto {
  if (!isObject(body)) throw new ApiError('invalid_request', 'The request body must be a JSON object');
  if (body.model === undefined || body.model === null) {
    throw new ApiError('missing_required_field', 'Missing required field: model');
  }
  if (body.input === undefined || body.input === null) {
    throw new ApiError('missing_required_field', 'Missing required field: input');
  }
  if (typeof body.model !== 'string') throw new ApiError('invalid_model', 'model must be an assistant id');
  const assistantId = parseAssistantId(body.model);
  if (!assistantId) {
    throw new ApiError('invalid_model', `model must be an assistant UUID, bare or as asst_<uuid>`);
  }
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') {
    throw new ApiError('invalid_request', 'stream must be true or false');
  }
  if (body.background !== undefined && body.background !== null && typeof body.background !== 'boolean') {
    throw new ApiError('invalid_request', 'background must be true or false');
  }
  if (body.background === true && body.store === false) {
    throw new ApiError(
      'invalid_request',
      'background: true needs the response to be stored (store must not be false)',
    );
  }
  if (
    body.instructions !== undefined &&
    body.instructions !== null &&
    typeof body.instructions !== 'string'
  ) {
    throw new ApiError('invalid_request', 'instructions must be a string');
  }
  if (
    body.previous_response_id !== undefined &&
    body.previous_response_id !== null &&
    typeof body.previous_response_id !== 'string'
  ) {
    throw new ApiError('invalid_request', 'previous_response_id must be a string');
  }
  const tools = parseTools(body.tools);
  return {
    assistantId,
    input: parseInput(body.input),
    previousResponseId: (body.previous_response_id as string | undefined) ?? null,
    stream: body.stream === true,
    background: body.background === true,
    tools,
    instructions: (body.instructions as string | undefined) ?? null,
  };
}

function parseTools(raw: unknown): FunctionToolDto[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new ApiError('invalid_request', 'tools must be an array');
  if (raw.length > MAX_TOOLS) {
    throw new ApiError('too_many_tools', `At most ${MAX_TOOLS} tools per request (got ${raw.length})`);
  }
  for (const [index, tool] of raw.entries()) {
    if (!isObject(tool)) throw new ApiError('invalid_request', `tools[${index}] must be an object`);
    if (typeof tool.name !== 'string' || !TOOL_NAME.test(tool.name)) {
      // Hosted tool types carry no name; they are judged by type below.
      if (tool.type === 'function' || tool.type === undefined) {
        throw new ApiError('invalid_tool_name', `tools[${index}].name must match ^[a-zA-Z0-9_-]{1,64}$`);
      }
    }
  }
  const seen = new Set<string>();
  for (const tool of raw as Record<string, unknown>[]) {
    if (typeof tool.name !== 'string') continue;
    if (seen.has(tool.name)) throw new ApiError('duplicate_tool_name', `Two tools are named "${tool.name}"`);
    seen.add(tool.name);
  }
  return (raw as Record<string, unknown>[]).map((tool, index) => {
    if (tool.type !== 'function') {
      throw new ApiError(
        'tool_not_supported_for_model',
        `tools[${index}] has type "${String(tool.type)}"; requests may declare only function tools (server-side tools are configured on the assistant)`,
      );
    }
    const parameters = tool.parameters ?? { type: 'object', properties: {} };
    if (!isObject(parameters))
      throw new ApiError('invalid_request', `tools[${index}].parameters must be an object`);
    if (tool.description !== undefined && tool.description !== null && typeof tool.description !== 'string') {
      throw new ApiError('invalid_request', `tools[${index}].description must be a string`);
    }
    return {
      name: tool.name as string,
      description: (tool.description as string | undefined) ?? undefined,
      parameters,
      strict: typeof tool.strict === 'boolean' ? tool.strict : undefined,
    };
  });
}

function parseInput(raw: unknown): InputItem[] {
  if (typeof raw === 'string') return [{ type: 'message', role: 'user', text: raw }];
  if (!Array.isArray(raw))
    throw new ApiError('invalid_request', 'input must be a string or an array of items');
  if (raw.length === 0) throw new ApiError('invalid_request', 'input must not be empty');
  const items = raw.map((item, index) => parseItemShape(item, index));
  // call_id is checked after every item's type, so an unknown type is reported first.
  for (const [index, item] of raw.entries()) {
    const typed = item as Record<string, unknown>;
    if (
      (typed.type === 'function_call_output' || typed.type === 'function_call') &&
      (typeof typed.call_id !== 'string' || typed.call_id.length === 0)
    ) {
      throw new ApiError('missing_call_id', `input[${index}] (${String(typed.type)}) has no call_id`);
    }
  }
  return items.map((build) => build());
}

function parseItemShape(item: unknown, index: number): () => InputItem {
  if (!isObject(item)) throw new ApiError('invalid_input_type', `input[${index}] must be an object`);
  const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
  if (type === 'message') {
    if (typeof item.role !== 'string' || !MESSAGE_ROLES.has(item.role)) {
      throw new ApiError(
        'invalid_input_type',
        `input[${index}] has an unsupported role "${String(item.role)}"`,
      );
    }
    const text = messageText(item.content, index);
    const role = item.role as 'user' | 'assistant' | 'system' | 'developer';
    return () => ({ type: 'message', role, text });
  }
  if (type === 'function_call_output') {
    const output = item.output;
    return () => ({
      type: 'function_call_output',
      callId: item.call_id as string,
      output: typeof output === 'string' ? output : JSON.stringify(output ?? null),
    });
  }
  if (type === 'function_call') {
    if (typeof item.name !== 'string' || typeof item.arguments !== 'string') {
      throw new ApiError(
        'invalid_request',
        `input[${index}] (function_call) needs name and arguments strings`,
      );
    }
    return () => ({
      type: 'function_call',
      callId: item.call_id as string,
      name: item.name as string,
      arguments: item.arguments as string,
    });
  }
  throw new ApiError(
    'invalid_input_type',
    `input[${index}] has an unsupported type ${JSON.stringify(type) ?? 'undefined'}`,
  );
}

function messageText(content: unknown, index: number): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) {
    throw new ApiError(
      'invalid_request',
      `input[${index}].content must be a string or an array of text parts`,
    );
  }
  return content
    .map((part, partIndex) => {
      if (!isObject(part) || !TEXT_PART_TYPES.has(part.type as string) || typeof part.text !== 'string') {
        throw new ApiError(
          'invalid_input_type',
          `input[${index}].content[${partIndex}] has an unsupported type "${String(isObject(part) ? part.type : part)}"`,
        );
      }
      return part.text;
    })
    .join('');
}
