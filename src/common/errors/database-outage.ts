import { Logger } from '@nestjs/common';
import { ApiError } from './error-catalogue.js';

/**
 * SQLSTATE classes and codes meaning "the database cannot serve now" rather than "this statement
 * is wrong": connection exceptions (08), insufficient resources (53: too many connections, disk
 * full), operator intervention (57P01–57P03: shutdown, crash, starting up), system errors (58),
 * and a read-only server (25006, e.g. a failover in progress).
 */
const UNAVAILABLE_SQLSTATE = /^(08|53|58)|^57P0[123]$|^25006$/;

/** Socket errors of the driver's connection (the server or the network went away). */
const UNAVAILABLE_SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** Messages of `pg` / `pg-pool` errors that carry no code. */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated/, // unexpectedly, or due to connection timeout (a stalled server)
  /is not queryable$/, // a client whose connection already failed
  /^Query read timeout$/,
];

/**
 * True when `error` (a TypeORM QueryFailedError or the driver's own error) says the database is
 * unreachable or cannot serve, as opposed to a problem with the request or the statement.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const cause = driverCause(error);
  // An HTTP error (body-parser's `request.aborted` has code ECONNABORTED) is the client's socket.
  if (!cause || isHttpError(error)) return false;
  const code = cause.code;
  if (typeof code === 'string') {
    if (UNAVAILABLE_SOCKET_CODES.has(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code)) return UNAVAILABLE_SQLSTATE.test(code);
  }
  return UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(cause.message));
}

/**
 * SQLSTATEs of a transaction the database rolled back because of a concurrent one: a deadlock's
 * victim (40P01) or a serialization failure (40001). Nothing of it was written; the same request
 * again will most likely pass. Not an outage: the database serves.
 */
const CONFLICT_SQLSTATE = new Set(['40P01', '40001']);

export function isTransactionConflict(error: unknown): boolean {
  const code = driverCause(error)?.code;
  return typeof code === 'string' && CONFLICT_SQLSTATE.has(code) && !isHttpError(error);
}

/** 503 with Retry-After: the request was rolled back in a conflict with a concurrent one. */
export function transactionConflictError(): ApiError {
  return new ApiError(
    'service_unavailable',
    'The database rolled this request back in a conflict with a concurrent one; retry it',
    { 'Retry-After': '1' },
  );
}

/** 503 with the catalogue's Retry-After. */
export function databaseUnavailableError(): ApiError {
  return new ApiError('service_unavailable', 'The database is unavailable; retry shortly');
}

type OutageListener = () => void;

/**
 * One log line when the database becomes unavailable and one when it is back, however many
 * requests fail in between (they are counted and reported with the recovery). What ends an outage
 * is a successful probe (`DatabaseOutageProbe`), which starts when the outage does.
 */
export class DatabaseOutage {
  private readonly logger = new Logger('Database');
  private since: number | undefined;
  private failures = 0;
  private readonly listeners = new Set<OutageListener>();

  get down(): boolean {
    return this.since !== undefined;
  }

  /** Records a failed request; logs only the first of an outage. */
  failed(error: unknown): void {
    this.failures += 1;
    if (this.since !== undefined) return;
    this.since = Date.now();
    this.logger.error({
      msg: 'database unavailable: answering 503 service_unavailable until it is back',
      ...describeDriverFailure(error),
    });
    for (const listener of this.listeners) listener();
  }

  recovered(): void {
    if (this.since === undefined) return;
    this.logger.log({
      msg: 'database available again',
      outageMs: Date.now() - this.since,
      failures: this.failures,
    });
    this.since = undefined;
    this.failures = 0;
  }

  /** Called at the start of every outage; returns the unsubscribe function. */
  onOutage(listener: OutageListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

interface ErrorLike {
  name: string;
  message: string;
  code?: unknown;
}

/**
 * The driver's error inside TypeORM's QueryFailedError, or the error itself. Duck-typed: socket
 * errors are made by Node's core, whose `Error` is not the one of a VM context (jest).
 */
function driverCause(error: unknown): ErrorLike | undefined {
  const isErrorLike = (value: unknown): value is ErrorLike =>
    typeof value === 'object' && value !== null && typeof (value as ErrorLike).message === 'string';
  if (!isErrorLike(error)) return undefined;
  const driverError = (error as { driverError?: unknown }).driverError;
  return isErrorLike(driverError) ? driverError : error;
}

function isHttpError(error: unknown): boolean {
  const { status, statusCode } = error as { status?: unknown; statusCode?: unknown };
  return typeof status === 'number' || typeof statusCode === 'number';
}

/** Class and driver code only: never SQL text, parameters or the server's message. */
function describeDriverFailure(error: unknown): Record<string, unknown> {
  const cause = driverCause(error);
  if (!cause) return {};
  const code = cause.code;
  // A server's message may quote data; a socket or pool message is the driver's own text.
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return { error: cause.name, driverCode: code };
  return { error: cause.name, driverCode: code, detail: cause.message.slice(0, 200) };
}

/**
 * The process's one tracker. Module state rather than a provider because the exception filter
 * and the stream writer reach it from plain functions (`toApiError`, `unexpectedFailure`).
 */
export const databaseOutage = new DatabaseOutage();
