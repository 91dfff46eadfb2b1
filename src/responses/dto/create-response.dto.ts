import { ApiError } from '../../common/errors/error-catalogue.js';
import { MAX_USER_ID_LENGTH, parsePrefixedUuid } from '../../common/http/request-params.js';
import type { ResponseOptions } from './response-options.dto.js';
import type { InputItem } from '../../turns/input-item.types.js';
import type { WebSearchRequest } from '../../tools/web-search/offline-web-search.tool.js';
import type { FileSearchRequest } from '../../vector-stores/file-search/file-search.tool.js';

/**
 * POST /v1/responses, parsed from its one declarative schema (request-schema/create-response.fields.ts)
 * rather than by class-validator because the contract fixes which error a client sees first
 * (spec 7.3): body, required fields, model, tools, input.
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
  /** The request's offline `web_search` tool (`external_web_access: false`); null without one. */
  webSearch: WebSearchRequest | null;
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

/** The per-request user headers of spec 4.1. */
export interface UserHeaders {
  userId: string | null;
  userToken: string | null;
  userTokens: Record<string, string>;
}

export const MAX_TOOLS = 128;
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

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

/** `conversation`: an id (`conv_<uuid>` or the bare UUID) or `{id}`. */
export function parseConversationParam(raw: unknown): string | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw === 'string') return raw;
  if (isObject(raw) && typeof raw.id === 'string') return raw.id;
  throw new ApiError('invalid_request', 'conversation must be a conversation id or an object {id}');
}

/** `conv_<uuid>` or the bare UUID (chat history's format) → the bare UUID, or null. */
export function parseConversationId(id: string): string | null {
  return parsePrefixedUuid(id, 'conv_', true);
}

export function parseTools(raw: unknown): FunctionToolDto[] {
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
