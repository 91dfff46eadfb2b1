import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { toApiError } from '../errors/all-exceptions.filter.js';
import { ApiError } from '../errors/error-catalogue.js';
import { checkStorableJson, checkStorableText } from './storable-text.js';

/**
 * What every request passes before any route, guard or controller: the request target, the
 * end-user headers, then the JSON body, each checked once by the text rule of storable-text.ts.
 * A request refused here has touched nothing: it is answered at once and `admit` never runs.
 * `ownBody` names the routes that read their body themselves, after authenticating (the MCP
 * gateway). One object, driven by the app's single edge middleware (src/app.module.ts), so a
 * request pays one router layer and one body callback rather than a middleware per check.
 */
export class RequestEdge {
  private readonly parse: RequestHandler;

  constructor(
    bodyLimit: number,
    private readonly ownBody: (req: Request) => boolean,
  ) {
    this.parse = express.json({ limit: bodyLimit, strict: false });
  }

  /** Checks `req`; calls `admit(req, res, next, extra)` once it passed, else answers (or hands a bug to `next`). */
  pass<T>(
    req: Request,
    res: Response,
    next: NextFunction,
    admit: (req: Request, res: Response, next: NextFunction, extra: T) => void,
    extra: T,
  ): void {
    if (!passes(res, next, checkHead, req)) return;
    if (this.ownBody(req)) return admit(req, res, next, extra);
    this.parse(req, res, (error?: unknown) => {
      if (error) return sendError(res, bodyError(error));
      if (passes(res, next, checkBody, req)) admit(req, res, next, extra);
    });
  }
}

function checkHead(req: Request): void {
  checkRequestTarget(req.originalUrl);
  normalizeUserHeaders(req);
}

function checkBody(req: Request): void {
  if (req.body !== undefined) checkStorableJson(req.body);
}

/** express.json as a promise; rejects with body-parser's error (see `bodyError`). */
export function jsonBodyReader(limit: number): (req: Request, res: Response) => Promise<void> {
  const parse = express.json({ limit, strict: false });
  return (req, res) =>
    new Promise((resolve, reject) => parse(req, res, (error?: Error) => (error ? reject(error) : resolve())));
}

export function bodyError(error: unknown): ApiError {
  return toApiError(error) ?? new ApiError('invalid_request', 'Request body could not be read');
}

/** Runs `check`; true when it passed, else the request is answered (or the bug passed on). */
function passes(res: Response, next: NextFunction, check: (req: Request) => void, req: Request): boolean {
  try {
    check(req);
    return true;
  } catch (error) {
    if (error instanceof ApiError) sendError(res, error);
    else next(error);
    return false;
  }
}

function sendError(res: Response, error: ApiError): void {
  res.status(error.status).json(error.toBody());
}

/**
 * Path segments and query parameters must be percent-encoded UTF-8 (RFC 3986): a bad escape
 * or an encoded lone surrogate is refused rather than decoded to U+FFFD, and what they decode
 * to follows the text rule.
 */
export function checkRequestTarget(target: string): void {
  if (/[^\x21-\x7e]/.test(target)) {
    throw new ApiError('invalid_request', 'The request path must be ASCII: percent-encode other characters');
  }
  const queryAt = target.indexOf('?');
  const path = queryAt === -1 ? target : target.slice(0, queryAt);
  for (const segment of path.split('/')) decodeComponent(segment, 'The path', false);
  if (queryAt === -1) return;
  for (const pair of target.slice(queryAt + 1).split('&')) {
    const equals = pair.indexOf('=');
    const rawName = equals === -1 ? pair : pair.slice(0, equals);
    const name = decodeComponent(rawName, 'A query parameter name', true);
    if (equals !== -1) {
      decodeComponent(pair.slice(equals + 1), `Query parameter ${JSON.stringify(name.slice(0, 40))}`, true);
    }
  }
}

/** `plusIsSpace`: in a query (form encoding) `+` is a space; in a path it is itself. */
function decodeComponent(raw: string, field: string, plusIsSpace: boolean): string {
  let text: string;
  try {
    text = decodeURIComponent(plusIsSpace ? raw.replaceAll('+', ' ') : raw);
  } catch {
    throw new ApiError('invalid_request', `${field} is not valid percent-encoded UTF-8`);
  }
  checkStorableText(text, field);
  return text;
}

/** Headers that name or act for the end user: one value each, never joined with ", ". */
const USER_HEADERS = ['x-user-id', 'x-user-token', 'x-user-tokens'] as const;
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Node reads header bytes as Latin-1. `x-user-id` is text a client also sends in JSON bodies
 * (a claim's `userId`), so it is decoded as UTF-8 here, in place, or refused: the same user
 * whichever way it arrives. The tokens are forwarded unchanged, so they keep their bytes; the
 * JSON of `x-user-tokens` is walked like a body.
 */
function normalizeUserHeaders(req: Request): void {
  for (const name of USER_HEADERS) {
    // An absent header cannot be doubled: `headersDistinct` copies every header of the request
    // into arrays on first read, so it is read only when one of these was sent.
    if (req.headers[name] !== undefined && (req.headersDistinct[name]?.length ?? 0) > 1) {
      throw new ApiError('invalid_request', `Header ${name} must be given once`);
    }
  }
  const userId = req.headers['x-user-id'];
  if (typeof userId === 'string') {
    let decoded: string;
    try {
      decoded = UTF8.decode(Buffer.from(userId, 'latin1'));
    } catch {
      throw new ApiError('invalid_request', 'Header x-user-id must be UTF-8 text');
    }
    checkStorableText(decoded, 'Header x-user-id');
    req.headers['x-user-id'] = decoded;
  }
  const tokens = req.headers['x-user-tokens'];
  if (typeof tokens === 'string') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(tokens);
    } catch {
      return; // not JSON: the route refuses it with its own message
    }
    checkStorableJson(parsed, { root: 'Header x-user-tokens', prefix: 'Header x-user-tokens, field ' });
  }
}
