import { ApiError } from '../common/errors/error-catalogue.js';
import type { ListInputItemsQuery } from './dto/list-input-items.dto.js';
import type { InputItem, InputPart } from '../turns/input-item.types.js';

/** An input item as GET /v1/responses/{id}/input_items shows it (OpenAI's item shapes). */
export type InputItemObject = Record<string, unknown> & { id: string; type: string };

export interface InputItemList {
  object: 'list';
  data: InputItemObject[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

const ID_PREFIX: Record<InputItem['type'], string> = {
  message: 'msg',
  function_call: 'fc',
  function_call_output: 'fco',
  reasoning: 'rs',
  compaction: 'cmp',
};

/**
 * A stored input item in the public shape. Items keep the id the client sent; others get one
 * derived from the response id and the item's place, so ids (and cursors) are stable.
 */
export function inputItemObject(item: InputItem, index: number, responseId: string): InputItemObject {
  const id = item.id ?? `${ID_PREFIX[item.type]}_${responseId.replaceAll('-', '')}_${index}`;
  if (item.type === 'function_call_output') {
    return { id, type: item.type, call_id: item.callId, output: item.output, status: 'completed' };
  }
  if (item.type === 'function_call') {
    const { callId, name, arguments: args } = item;
    return { id, type: item.type, call_id: callId, name, arguments: args, status: 'completed' };
  }
  if (item.type === 'reasoning') {
    return {
      id,
      type: item.type,
      summary: item.summary.map((text) => ({ type: 'summary_text', text })),
      content: item.content.map((text) => ({ type: 'reasoning_text', text })),
    };
  }
  if (item.type === 'compaction') return { id, type: item.type, encrypted_content: item.encryptedContent };
  const content = item.parts
    ? item.parts.map(partObject)
    : [
        item.role === 'assistant'
          ? { type: 'output_text', text: item.text, annotations: [] }
          : { type: 'input_text', text: item.text },
      ];
  return { id, type: 'message', role: item.role, status: 'completed', content };
}

function partObject(part: InputPart): Record<string, unknown> {
  if (part.type === 'input_text') return { type: 'input_text', text: part.text };
  if (part.type === 'input_image')
    return { type: 'input_image', image_url: part.imageUrl, detail: part.detail };
  return {
    type: 'input_file',
    ...(part.filename === null ? {} : { filename: part.filename }),
    ...(part.fileId !== undefined
      ? { file_id: part.fileId }
      : part.fileUrl === null
        ? { file_data: part.fileData }
        : { file_url: part.fileUrl }),
  };
}

/** One page of a response's input items, in `order`, after the item `after` names. */
export function inputItemPage(
  stored: InputItem[],
  responseId: string,
  query: ListInputItemsQuery,
): InputItemList {
  const items = stored.map((item, index) => inputItemObject(item, index, responseId));
  if (query.order === 'desc') items.reverse();
  let start = 0;
  if (query.after !== null) {
    const position = items.findIndex((item) => item.id === query.after);
    if (position < 0) throw new ApiError('invalid_request', 'after is not a cursor this endpoint returned');
    start = position + 1;
  }
  const data = items.slice(start, start + query.limit);
  return {
    object: 'list',
    data,
    first_id: data[0]?.id ?? null,
    last_id: data[data.length - 1]?.id ?? null,
    has_more: start + query.limit < items.length,
  };
}
