import type { Logger } from '@nestjs/common';
import { unexpectedFailure } from '../common/errors/all-exceptions.filter.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import { TurnAbortedError, UpstreamError } from '../llm/llm.types.js';

/** What a client hears of a turn that failed; anything unexpected is logged and stays generic. */
export function turnFailure(error: unknown, logger: Logger): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof UpstreamError) return new ApiError(error.code, error.message);
  if (error instanceof TurnAbortedError) return new ApiError('server_error', 'The request was cancelled');
  return unexpectedFailure(logger, error, 'The turn failed');
}
