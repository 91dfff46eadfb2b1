import type { CompactResponseDto } from '../dto/compact-response.dto.js';
import type { CreateResponseDto } from '../dto/create-response.dto.js';
import type { InputItem } from '../../turns/input-item.types.js';
import { CREATE_RESPONSE_FIELDS } from './create-response.fields.js';
import { parseRequest } from '../../common/request-schema/request-schema.js';

/** POST /v1/responses: the body, checked by its one schema, as the turn takes it. */
export function parseCreateResponse(body: unknown): CreateResponseDto {
  const fields = parseRequest(CREATE_RESPONSE_FIELDS, body);
  return {
    ...threadRequest(fields),
    conversationId: fields.conversation,
    stream: fields.stream,
    background: fields.background,
    tools: fields.tools.functions,
    fileSearch: fields.tools.fileSearch,
    webSearch: fields.tools.webSearch,
    options: {
      temperature: fields.temperature,
      topP: fields.top_p,
      presencePenalty: fields.presence_penalty,
      frequencyPenalty: fields.frequency_penalty,
      maxOutputTokens: fields.max_output_tokens,
      maxToolCalls: fields.max_tool_calls,
      topLogprobs: fields.top_logprobs,
      logprobs: fields.include.includes('message.output_text.logprobs'),
      include: fields.include,
      toolChoice: fields.tool_choice,
      parallelToolCalls: fields.parallel_tool_calls,
      text: fields.text,
      reasoning: fields.reasoning,
      metadata: fields.metadata,
      user: fields.user,
      safetyIdentifier: fields.safety_identifier,
      promptCacheKey: fields.prompt_cache_key,
      promptCacheRetention: fields.prompt_cache_retention,
      serviceTier: fields.service_tier,
      store: fields.store,
      truncation: fields.truncation,
    },
  };
}

/**
 * What POST /v1/responses and POST /v1/responses/compact both say: the assistant, the thread to
 * continue, the new input and the instructions, under the same field names.
 */
export function threadRequest(fields: {
  model: string;
  input: InputItem[];
  previous_response_id: string | null;
  instructions: string | null;
}): CompactResponseDto {
  return {
    assistantId: fields.model,
    input: fields.input,
    previousResponseId: fields.previous_response_id,
    instructions: fields.instructions,
  };
}
