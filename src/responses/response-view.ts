import type { StoredResponseStatus } from './entities/response.entity.js';
import type { StoredResponse } from './store/turn-store.repository.js';
import type { OutputItem } from './streaming/response-recorder.js';

/** The Response object of spec 2.1, as both the JSON body and `response.completed` carry it. */
export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: StoredResponseStatus;
  model: string;
  output: OutputItem[];
  output_text: string;
  previous_response_id: string | null;
  instructions: string | null;
  conversation: { id: string };
  usage: { input_tokens: number; output_tokens: number; total_tokens: number } | null;
  error: { type: string; code: string; message: string } | null;
  incomplete_details: null;
  metadata: Record<string, string>;
  parallel_tool_calls: boolean;
  tool_choice: 'auto';
  tools: unknown[];
  background: boolean;
}

/** What the Response object is built from, whether the turn is running or read back. */
export interface ResponseSource {
  id: string;
  assistantId: string;
  conversationId: string;
  previousResponseId: string | null;
  createdAt: Date;
  status: ResponseObject['status'];
  instructions: string | null;
  output: OutputItem[];
  outputText: string;
  usage: ResponseObject['usage'];
  error: ResponseObject['error'];
  background?: boolean;
}

/** Maps internal ids and fields to the public shape (`resp_…`, `asst_…`, seconds). */
export function responseObject(source: ResponseSource): ResponseObject {
  return {
    id: `resp_${source.id}`,
    object: 'response',
    created_at: Math.floor(source.createdAt.getTime() / 1000),
    status: source.status,
    model: `asst_${source.assistantId}`,
    output: source.output,
    output_text: source.outputText,
    previous_response_id: source.previousResponseId ? `resp_${source.previousResponseId}` : null,
    instructions: source.instructions,
    conversation: { id: source.conversationId },
    usage: source.usage,
    error: source.error,
    incomplete_details: null,
    metadata: {},
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    background: source.background ?? false,
  };
}

/** A stored response as GET /v1/responses/{id} returns it. */
export function storedToObject(stored: StoredResponse): ResponseObject {
  return responseObject({ ...stored, usage: stored.usage as ResponseObject['usage'] });
}
