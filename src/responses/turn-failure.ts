import type { Logger } from '@nestjs/common';
import { unexpectedFailure } from '../common/errors/all-exceptions.filter.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import {
  ContextLengthError,
  TurnAbortedError,
  UnsupportedParameterError,
  UpstreamError,
} from '../llm/llm.types.js';

/** Chat Completions parameter → the Responses request field a client sent. */
const RESPONSES_NAME: Record<string, string> = {
  max_tokens: 'max_output_tokens',
  max_completion_tokens: 'max_output_tokens',
  reasoning_effort: 'reasoning.effort',
  response_format: 'text.format',
  verbosity: 'text.verbosity',
  logprobs: 'include (message.output_text.logprobs)',
  tools: 'tools',
};

/** Chat Completions parameters that carry a request field of the same name. */
const SAME_NAME = new Set([
  'temperature',
  'top_p',
  'presence_penalty',
  'frequency_penalty',
  'top_logprobs',
  'tool_choice',
  'parallel_tool_calls',
  'user',
  'safety_identifier',
  'prompt_cache_key',
  'prompt_cache_retention',
  'service_tier',
]);

/** What a client hears of a turn that failed; anything unexpected is logged and stays generic. */
export function turnFailure(error: unknown, logger: Logger): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof UpstreamError) {
    const retryAfter = error.retryAfterSeconds;
    return new ApiError(error.code, error.message, retryAfter ? { 'Retry-After': String(retryAfter) } : {});
  }
  if (error instanceof UnsupportedParameterError) {
    const upstreamName = error.param.split('.')[0];
    const name = RESPONSES_NAME[upstreamName] ?? (SAME_NAME.has(upstreamName) ? upstreamName : undefined);
    // A parameter the service built (model, messages…) is the operator's misconfiguration, not the client's.
    if (name === undefined) {
      return new ApiError('upstream_unavailable', 'The upstream model refused the request the service built');
    }
    return new ApiError('invalid_request', `${name} is not supported by the model behind this assistant`);
  }
  if (error instanceof ContextLengthError) {
    const said = error.providerReason ? ` (the model provider said: ${error.providerReason})` : '';
    return new ApiError(
      'context_length_exceeded',
      `The conversation does not fit the model's context window${said}; send truncation: "auto" to leave the oldest turns out`,
    );
  }
  if (error instanceof TurnAbortedError) return new ApiError('server_error', 'The request was cancelled');
  return unexpectedFailure(logger, error, 'The turn failed');
}

/**
 * A start the store refused (404: its conversation or previous response gone, or not the
 * caller's), as against one it could not write (an outage: the usage write would fail alike).
 */
export function isRefusal(error: unknown): error is ApiError {
  return error instanceof ApiError && error.status === 404;
}
