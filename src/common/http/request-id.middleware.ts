import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives a request its id (the caller's, when it is sane) and echoes it in `x-request-id`; the
 * edge middleware (src/app.module.ts) calls it first, so every answer and log line carries it.
 */
export function assignRequestId(req: Request, res: Response): string {
  const incoming = req.headers['x-request-id'];
  const requestId =
    typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : `req_${randomUUID()}`;
  res.setHeader('x-request-id', requestId);
  return requestId;
}
