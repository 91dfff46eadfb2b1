import type { CreateResponseDto } from '../dto/create-response.dto.js';
import { CREATE_RESPONSE_FIELDS } from './create-response.fields.js';
import { parseRequest } from '../../common/request-schema/request-schema.js';

/** POST /v1/responses: the body, checked by its one schema, as the turn takes it. */
export function parseCreateResponse(body: unknown): CreateResponseDto {
  const fields = parseRequest(CREATE_RESPONSE_FIELDS, body);
  return {
    assistantId: fields.model,
    input: fields.input,
    previousResponseId: fields.previous_response_id,
    conversationId: fields.conversation,
    stream: fields.stream,
    background: fields.background,
    tools: fields.tools.functions,
    fileSearch: fields.tools.fileSearch,
    webSearch: fields.tools.webSearch,
    instructions: fields.instructions,
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
