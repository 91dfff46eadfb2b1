import type { StoredResponse } from './store/stored-turn-rows.js';
import { DEFAULT_ECHO, type EchoedParams } from './turn-options.js';
import type { TurnStatus } from '../turns/turn.types.js';
import type { OutputItem } from '../turns/output-item.types.js';

/** `queued` and `cancelled` belong to background responses. */
export type ResponseStatus = TurnStatus;

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/**
 * The Response object: the JSON body, every `response.*` lifecycle event, GET. Every field of the
 * Open Responses `ResponseResource`, in its order, then the contract's `output_text` and
 * `conversation`. One builder, so a stored copy is byte-identical to the streamed one.
 */
export interface ResponseObject extends EchoedParams {
  id: string;
  object: 'response';
  created_at: number;
  completed_at: number | null;
  status: ResponseStatus;
  incomplete_details: { reason: string } | null;
  model: string;
  previous_response_id: string | null;
  instructions: string | null;
  output: OutputItem[];
  output_text: string;
  error: { type: string; code: string; message: string } | null;
  usage: ResponseUsage | null;
  conversation: { id: string } | null;
}

/** What the Response object is built from, whether the turn is running or read back. */
export interface ResponseSource {
  id: string;
  assistantId: string;
  /** What `model` names instead of the assistant (`model.failover.reportModel: upstream`). */
  model?: string;
  /** Null for a `store: false` turn that started no stored conversation. */
  conversationId: string | null;
  previousResponseId: string | null;
  createdAt: Date;
  completedAt: Date | null;
  status: ResponseStatus;
  incompleteReason: string | null;
  instructions: string | null;
  output: OutputItem[];
  outputText: string;
  usage: ResponseUsage | null;
  error: ResponseObject['error'];
  params: EchoedParams;
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** Maps internal ids and fields to the public shape (`resp_…`, `asst_…`, seconds). */
export function responseObject(source: ResponseSource): ResponseObject {
  const { params } = source;
  return {
    id: `resp_${source.id}`,
    object: 'response',
    created_at: seconds(source.createdAt),
    completed_at: source.status === 'completed' && source.completedAt ? seconds(source.completedAt) : null,
    status: source.status,
    incomplete_details: source.incompleteReason ? { reason: source.incompleteReason } : null,
    model: source.model ?? `asst_${source.assistantId}`,
    previous_response_id: source.previousResponseId ? `resp_${source.previousResponseId}` : null,
    instructions: source.instructions,
    output: source.output,
    output_text: source.outputText,
    error: source.error,
    tools: params.tools,
    tool_choice: params.tool_choice,
    truncation: params.truncation,
    parallel_tool_calls: params.parallel_tool_calls,
    text: params.text,
    top_p: params.top_p,
    presence_penalty: params.presence_penalty,
    frequency_penalty: params.frequency_penalty,
    top_logprobs: params.top_logprobs,
    temperature: params.temperature,
    reasoning: params.reasoning,
    user: params.user,
    usage: source.usage,
    max_output_tokens: params.max_output_tokens,
    max_tool_calls: params.max_tool_calls,
    store: params.store,
    background: params.background,
    service_tier: params.service_tier,
    metadata: params.metadata,
    safety_identifier: params.safety_identifier,
    prompt_cache_key: params.prompt_cache_key,
    conversation: source.conversationId ? { id: source.conversationId } : null,
  };
}

/**
 * A stored response as GET /v1/responses/{id} returns it: the body stored with the turn (the
 * very object the client was sent), or, for a response stored before bodies were kept, one
 * rebuilt from its columns with the API's default parameters.
 */
export function storedToObject(stored: StoredResponse): ResponseObject {
  if (stored.body) {
    const body = stored.body as ResponseObject;
    // A running turn's row holds the object its start announced; a turn cancelled, or failed by
    // the sweep, keeps it. The row's status and error are the current ones.
    if (body.status === stored.status) return body;
    return { ...body, status: stored.status, error: stored.error };
  }
  const usage = stored.usage;
  return responseObject({
    ...stored,
    completedAt: stored.completedAt,
    incompleteReason: null,
    usage: usage
      ? {
          input_tokens: usage.input_tokens ?? 0,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: usage.output_tokens ?? 0,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: usage.total_tokens ?? 0,
        }
      : null,
    params: { ...DEFAULT_ECHO, background: stored.background },
  });
}
