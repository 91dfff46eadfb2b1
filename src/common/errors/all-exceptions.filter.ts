import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Response } from 'express';
import {
  databaseOutage,
  databaseUnavailableError,
  isDatabaseUnavailable,
  isTransactionConflict,
  transactionConflictError,
} from './database-outage.js';
import { ApiError, ErrorCode } from './error-catalogue.js';

/** Status codes Nest or Express may raise on their own, mapped onto the catalogue. */
const CODE_FOR_STATUS: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'invalid_api_key',
  403: 'insufficient_scope',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limit_exceeded',
};

const UNKNOWN_ROUTE = 'No endpoint has this method and path; /openapi.json lists every route';

/** Errors thrown by body-parser carry a `type` and a status but are not HttpExceptions. */
interface BodyParserError {
  type: string;
  status: number;
}

function isBodyParserError(error: unknown): error is BodyParserError {
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as BodyParserError).type === 'string' &&
    typeof (error as BodyParserError).status === 'number' &&
    (error as BodyParserError).type.startsWith('entity.')
  );
}

/** Converts anything thrown into the one envelope, `{error:{type,code,message}}`. */
export function toApiError(exception: unknown): ApiError | undefined {
  if (exception instanceof ApiError) return exception;
  if (isBodyParserError(exception)) {
    if (exception.type === 'entity.too.large') {
      return new ApiError('payload_too_large', 'Request body exceeds the size limit');
    }
    if (exception.type === 'entity.parse.failed') {
      return new ApiError('invalid_request', 'Request body is not valid JSON');
    }
    return new ApiError('invalid_request', 'Request body could not be read');
  }
  if (isPoolExhausted(exception)) {
    // Every pooled connection stayed busy for the pool's whole wait: shed rather than hang.
    return new ApiError('service_overloaded', 'The service is under high load; retry shortly', {
      'Retry-After': '1',
    });
  }
  // A deadlock's victim or a serialization failure: rolled back whole, worth retrying, never a 500.
  if (isTransactionConflict(exception)) return transactionConflictError();
  if (isDatabaseUnavailable(exception)) {
    // Logged once per outage by the tracker, not once per request.
    databaseOutage.failed(exception);
    return databaseUnavailableError();
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const code = CODE_FOR_STATUS[status];
    if (code === undefined) return undefined;
    // Nest's router raises the only 404 HttpException ("Cannot POST /x"): say it our way.
    if (code === 'not_found') return new ApiError(code, UNKNOWN_ROUTE);
    return new ApiError(code, describeHttpException(exception));
  }
  return undefined;
}

/** pg-pool's error when no connection frees up within `connectionTimeoutMillis`. */
function isPoolExhausted(exception: unknown): boolean {
  return exception instanceof Error && exception.message === 'timeout exceeded when trying to connect';
}

function describeHttpException(exception: HttpException): string {
  const response = exception.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (Array.isArray(message)) return message.join('; ');
  if (typeof message === 'string') return message;
  return exception.message;
}

@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const error = toApiError(exception) ?? this.unexpected(exception);
    if (res.headersSent) {
      // A stream already started owns its own error signalling; just make sure it ends.
      if (!res.writableEnded) res.end();
      return;
    }
    for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
    res.status(error.status).json(error.toBody());
  }

  private unexpected(exception: unknown): ApiError {
    return unexpectedFailure(this.logger, exception, 'The server failed to handle the request');
  }
}

/**
 * What a client is told of a failure the code did not anticipate: the catalogue's mapping when
 * there is one (a database outage is a 503), otherwise `server_error`, logged here.
 */
export function unexpectedFailure(logger: Logger, exception: unknown, message: string): ApiError {
  const known = toApiError(exception);
  if (known) return known;
  logger.error(describeUnexpected(exception));
  return new ApiError('server_error', message);
}

/** Logs a failure handled elsewhere, except a database outage, which is logged once in all. */
export function logUnexpected(logger: Logger, exception: unknown, msg: string): void {
  if (isDatabaseUnavailable(exception)) databaseOutage.failed(exception);
  else logger.error({ ...describeUnexpected(exception), msg });
}

/** A log-safe description: the class and driver code, never a stack, SQL text or parameters. */
export function describeUnexpected(exception: unknown): Record<string, unknown> {
  if (!(exception instanceof Error)) return { msg: 'unexpected non-error thrown' };
  const driverCode = (exception as { driverError?: { code?: unknown } }).driverError?.code;
  if (driverCode !== undefined) {
    return { msg: 'database error', error: exception.name, driverCode };
  }
  // A JSON parse error quotes its input, which may be a header value (a token): name it only.
  if (exception instanceof SyntaxError) return { msg: 'unexpected error', error: exception.name };
  return { msg: 'unexpected error', error: exception.name, detail: exception.message.slice(0, 200) };
}
