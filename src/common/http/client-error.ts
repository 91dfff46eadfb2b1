import { STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, type ErrorCode } from '../errors/error-catalogue.js';

/**
 * Requests Node's HTTP parser refuses never reach Express: without this, Node answers them with
 * an empty 400 or 431. Here they get the envelope too, where the socket still allows a reply.
 */
export function answerMalformedHttp(server: Server, limits: { maxHeaderBytes: number }): void {
  // Read by Node for every new connection, so setting it on the created server is enough.
  (server as Server & { maxHeaderSize: number }).maxHeaderSize = limits.maxHeaderBytes;
  server.on('clientError', onClientError);
}

interface ParserError extends Error {
  code?: string;
  /** llhttp's fixed description of what was wrong ("Invalid header value char"). */
  reason?: string;
}

/** Sockets already answered: the parser reports every later chunk of them again. */
const answered = new WeakSet<Duplex>();
/** How long the rest of a refused request is read (and dropped) before the socket is closed. */
const DRAIN_MS = 5000;

function onClientError(error: ParserError, socket: Duplex): void {
  if (answered.has(socket)) return;
  // Node's own rule: never write into a response that already started on this socket.
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  answered.add(socket);
  const apiError = describe(error);
  const body = JSON.stringify(apiError.toBody());
  const head = [
    `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ];
  // Ended, not destroyed: closing with unread input (the rest of a 100 KB header) would reset
  // the connection and could discard the reply. The client closes after reading it.
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  const timer = setTimeout(() => socket.destroy(), DRAIN_MS).unref();
  socket.once('close', () => clearTimeout(timer));
}

const BY_CODE: Partial<Record<string, [ErrorCode, string]>> = {
  HPE_HEADER_OVERFLOW: ['headers_too_large', 'The request line and headers exceed the size limit'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: ['payload_too_large', 'The chunk extensions exceed the size limit'],
  ERR_HTTP_REQUEST_TIMEOUT: ['request_timeout', 'The request did not arrive in time'],
};

function describe(error: ParserError): ApiError {
  const known = error.code === undefined ? undefined : BY_CODE[error.code];
  if (known) return new ApiError(known[0], known[1]);
  const reason = typeof error.reason === 'string' ? `: ${error.reason.slice(0, 100)}` : '';
  return new ApiError('invalid_request', `Malformed HTTP request${reason}`);
}
