import { ApiError } from '../../common/errors/error-catalogue.js';
import { MAX_USER_ID_LENGTH, parsePrefixedUuid } from '../../common/http/request-params.js';
import { openSummary } from '../compaction-content.js';
import { parseResponseOptions, type ResponseOptions } from './response-options.dto.js';
import {
  splitFileSearchTool,
  type FileSearchRequest,
} from '../../vector-stores/file-search/file-search.tool.js';

/**
 * POST /v1/responses, parsed by hand rather than by class-validator because the contract fixes
 * which error a client sees first (spec 7.3): body, required fields, model, tools, input.
 */
export interface CreateResponseDto {
  assistantId: string;
  input: InputItem[];
  previousResponseId: string | null;
  /** The Conversations API's alternative to `previous_response_id`: the raw id, parsed on use. */
  conversationId: string | null;
  stream: boolean;
  /** Run the turn server-side whatever the client does (docs/api.md, "Background responses"). */
  background: boolean;
  tools: FunctionToolDto[];
  /** The request's `file_search` tool (docs/knowledge.md), run by the service; null without one. */
  fileSearch: FileSearchRequest | null;
  instructions: string | null;
  /** Sampling, tool control, structured output, reasoning, metadata, storage: see response-options.dto.ts. */
  options: ResponseOptions;
}

export interface FunctionToolDto {
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
  strict?: boolean;
}

/**
 * One input item as the turn keeps it (stored in `responses.input`). `id` is the client's own
 * item id when it sent one. A message's `parts` are present only when it carries an image or a
 * file; `text` is always the concatenation of its text parts (chat history, title).
 */
export type InputItem =
  | {
      type: 'message';
      role: 'user' | 'assistant' | 'system' | 'developer';
      text: string;
      parts?: InputPart[];
      id?: string;
    }
  | { type: 'function_call_output'; callId: string; output: string; id?: string }
  | { type: 'function_call'; callId: string; name: string; arguments: string; id?: string }
  /** A reasoning item a client sends back with its own history: kept, not shown to the model again. */
  | { type: 'reasoning'; content: string[]; summary: string[]; id?: string }
  /** A compaction item from POST /v1/responses/compact: the model sees its summary. */
  | { type: 'compaction'; encryptedContent: string; summary: string; id?: string };

export type ImageDetail = 'low' | 'high' | 'auto';

/**
 * A content part of a user message. `imageUrl` is an http(s) URL or a `data:image/…;base64,`
 * URL; `fileData` is a `data:<type>;base64,` URL (bare base64 is wrapped at parse time).
 */
export type InputPart =
  | { type: 'input_text'; text: string }
  | { type: 'input_image'; imageUrl: string; detail: ImageDetail }
  | { type: 'input_file'; filename: string | null; fileData: string | null; fileUrl: string | null };

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
  const conversationId = parseConversationParam(body.conversation);
  if (
    conversationId !== null &&
    body.previous_response_id !== undefined &&
    body.previous_response_id !== null
  ) {
    throw new ApiError(
      'invalid_request',
      'previous_response_id and conversation are mutually exclusive: send only one of them',
    );
  }
  const options = parseResponseOptions(body);
  const { fileSearch, rest } = splitFileSearchTool(body.tools);
  const tools = parseTools(rest);
  return {
    assistantId,
    input: parseInput(body.input),
    previousResponseId: (body.previous_response_id as string | undefined) ?? null,
    conversationId,
    stream: body.stream === true,
    background: body.background === true,
    tools,
    fileSearch,
    instructions: (body.instructions as string | undefined) ?? null,
    options,
  };
}

/** `conversation`: an id (`conv_<uuid>` or the bare UUID) or `{id}`. */
function parseConversationParam(raw: unknown): string | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw === 'string') return raw;
  if (isObject(raw) && typeof raw.id === 'string') return raw.id;
  throw new ApiError('invalid_request', 'conversation must be a conversation id or an object {id}');
}

/** `conv_<uuid>` or the bare UUID (chat history's format) → the bare UUID, or null. */
export function parseConversationId(id: string): string | null {
  return parsePrefixedUuid(id, 'conv_', true);
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

/** Input items, as `input` and the Conversations API's `items` take them. */
export function parseInput(raw: unknown): InputItem[] {
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
    const role = item.role as 'user' | 'assistant' | 'system' | 'developer';
    const { text, parts } = messageContent(item.content, index, role);
    const id = clientItemId(item);
    return () => ({ type: 'message', role, text, ...(parts ? { parts } : {}), ...id });
  }
  if (type === 'function_call_output') {
    const output = item.output;
    return () => ({
      type: 'function_call_output',
      callId: item.call_id as string,
      output: typeof output === 'string' ? output : JSON.stringify(output ?? null),
      ...clientItemId(item),
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
      ...clientItemId(item),
    });
  }
  if (type === 'reasoning') {
    const texts = (parts: unknown, kind: string): string[] => {
      if (parts === undefined || parts === null) return [];
      if (!Array.isArray(parts) || !parts.every((part) => isObject(part) && typeof part.text === 'string')) {
        throw new ApiError(
          'invalid_request',
          `input[${index}] (reasoning) ${kind} must be an array of text parts`,
        );
      }
      return parts.map((part) => (part as { text: string }).text);
    };
    const content = texts(item.content, 'content');
    const summary = texts(item.summary, 'summary');
    return () => ({ type: 'reasoning', content, summary, ...clientItemId(item) });
  }
  if (type === 'compaction') {
    const sealed = item.encrypted_content;
    const summary = typeof sealed === 'string' ? openSummary(sealed) : null;
    if (typeof sealed !== 'string' || summary === null) {
      throw new ApiError(
        'invalid_request',
        `input[${index}] (compaction) encrypted_content must be one this service returned from /v1/responses/compact`,
      );
    }
    return () => ({ type: 'compaction', encryptedContent: sealed, summary, ...clientItemId(item) });
  }
  throw new ApiError(
    'invalid_input_type',
    `input[${index}] has an unsupported type ${JSON.stringify(type) ?? 'undefined'}`,
  );
}

/** The client's own item id, kept so input_items lists it (and pages by it) as sent. */
function clientItemId(item: Record<string, unknown>): { id?: string } {
  return typeof item.id === 'string' && item.id.length > 0 && item.id.length <= 256 ? { id: item.id } : {};
}

const IMAGE_DETAILS = new Set(['low', 'high', 'auto']);
const DATA_IMAGE = /^data:image\/(png|jpeg|jpg|gif|webp);base64,/i;
const DATA_URL = /^data:([a-z0-9.+-]+\/[a-z0-9.+-]+);base64,/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** Media types for bare `file_data` base64, by file name extension. */
const FILE_TYPES: Record<string, string> = {
  pdf: 'application/pdf',
  txt: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  json: 'application/json',
  html: 'text/html',
};

function isWebUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/**
 * A message's content: a string, or parts. Text parts join into `text`; image and file parts
 * (user messages only) are kept as `parts`, checked here for shape; their size and URLs are
 * checked when the turn is prepared (config limits, the SSRF guard).
 */
function messageContent(
  content: unknown,
  index: number,
  role: string,
): { text: string; parts: InputPart[] | undefined } {
  if (typeof content === 'string') return { text: content, parts: undefined };
  if (!Array.isArray(content)) {
    throw new ApiError(
      'invalid_request',
      `input[${index}].content must be a string or an array of content parts`,
    );
  }
  const parts = content.map((part, partIndex) =>
    contentPart(part, `input[${index}].content[${partIndex}]`, role),
  );
  const text = parts.map((part) => (part.type === 'input_text' ? part.text : '')).join('');
  return { text, parts: parts.some((part) => part.type !== 'input_text') ? parts : undefined };
}

function contentPart(part: unknown, path: string, role: string): InputPart {
  const type = isObject(part) ? part.type : part;
  if (isObject(part) && TEXT_PART_TYPES.has(part.type as string) && typeof part.text === 'string') {
    return { type: 'input_text', text: part.text };
  }
  if (!isObject(part) || (type !== 'input_image' && type !== 'input_file')) {
    throw new ApiError('invalid_input_type', `${path} has an unsupported type "${String(type)}"`);
  }
  if (role !== 'user') {
    throw new ApiError('invalid_input_type', `${path} (${String(type)}) is accepted only in user messages`);
  }
  if (part.file_id !== undefined && part.file_id !== null) {
    throw new ApiError(
      'invalid_request',
      `${path}.file_id is not supported in input parts yet: send ${type === 'input_image' ? 'image_url' : 'file_data or file_url'}`,
    );
  }
  return type === 'input_image' ? imagePart(part, path) : filePart(part, path);
}

function imagePart(part: Record<string, unknown>, path: string): InputPart {
  const url = part.image_url;
  if (typeof url !== 'string' || url.length === 0) {
    throw new ApiError('invalid_request', `${path}.image_url is required: an http(s) URL or a data URL`);
  }
  const detail = part.detail ?? 'auto';
  if (typeof detail !== 'string' || !IMAGE_DETAILS.has(detail)) {
    throw new ApiError('invalid_request', `${path}.detail must be "low", "high" or "auto"`);
  }
  if (url.startsWith('data:')) {
    if (!DATA_IMAGE.test(url) || !BASE64.test(url.slice(url.indexOf(',') + 1))) {
      throw new ApiError(
        'invalid_request',
        `${path}.image_url must be a base64 data URL of a PNG, JPEG, GIF or WebP image`,
      );
    }
  } else if (!isWebUrl(url)) {
    throw new ApiError('invalid_request', `${path}.image_url must be an http(s) URL or a data URL`);
  }
  return { type: 'input_image', imageUrl: url, detail: detail as ImageDetail };
}

function filePart(part: Record<string, unknown>, path: string): InputPart {
  const { filename, file_data: data, file_url: url } = part;
  if (
    filename !== undefined &&
    filename !== null &&
    (typeof filename !== 'string' || filename.length > 255)
  ) {
    throw new ApiError('invalid_request', `${path}.filename must be a string of at most 255 characters`);
  }
  const name = filename || null;
  const hasData = data !== undefined && data !== null;
  const hasUrl = url !== undefined && url !== null;
  if (hasData === hasUrl) {
    throw new ApiError('invalid_request', `${path} needs exactly one of file_data and file_url`);
  }
  if (hasUrl) {
    if (typeof url !== 'string' || !isWebUrl(url)) {
      throw new ApiError('invalid_request', `${path}.file_url must be an http(s) URL`);
    }
    return { type: 'input_file', filename: name, fileData: null, fileUrl: url };
  }
  if (typeof data !== 'string' || data.length === 0) {
    throw new ApiError('invalid_request', `${path}.file_data must be base64 data or a base64 data URL`);
  }
  const typed = DATA_URL.exec(data);
  const base64 = typed ? data.slice(typed[0].length) : data;
  if (!BASE64.test(base64) || (data.startsWith('data:') && !typed)) {
    throw new ApiError('invalid_request', `${path}.file_data must be base64 data or a base64 data URL`);
  }
  const extension = name?.split('.').pop()?.toLowerCase() ?? '';
  const fileData = typed
    ? data
    : `data:${FILE_TYPES[extension] ?? 'application/octet-stream'};base64,${data}`;
  return { type: 'input_file', filename: name, fileData, fileUrl: null };
}
