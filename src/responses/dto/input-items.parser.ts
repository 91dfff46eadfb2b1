import { ApiError } from '../../common/errors/error-catalogue.js';
import { isObject } from '../../common/request-schema/request-field.js';
import { openSummary } from '../compaction-content.js';
import type { ImageDetail, InputItem, InputPart } from '../../turns/input-item.types.js';

/**
 * Input items and their content parts (text, images, files), checked for shape: `input` of
 * POST /v1/responses and compact, and the Conversations API's `items`.
 */
const MESSAGE_ROLES = new Set(['user', 'assistant', 'system', 'developer']);
const TEXT_PART_TYPES = new Set(['input_text', 'output_text', 'text']);
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
  if (type === 'input_image' && part.file_id !== undefined && part.file_id !== null) {
    throw new ApiError(
      'invalid_request',
      `${path}.file_id is not supported in input_image parts yet: send image_url`,
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
  const fileId = part.file_id;
  const hasData = data !== undefined && data !== null;
  const hasUrl = url !== undefined && url !== null;
  const hasId = fileId !== undefined && fileId !== null;
  if (Number(hasData) + Number(hasUrl) + Number(hasId) !== 1) {
    throw new ApiError('invalid_request', `${path} needs exactly one of file_id, file_data and file_url`);
  }
  if (hasId) {
    // Resolved when the turn is prepared: within the caller's organization (and end user).
    if (typeof fileId !== 'string' || fileId.length === 0 || fileId.length > 256) {
      throw new ApiError('invalid_request', `${path}.file_id must be the id of an uploaded file (file-…)`);
    }
    return { type: 'input_file', filename: name, fileData: null, fileUrl: null, fileId };
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
