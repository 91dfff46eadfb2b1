import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives a request its id (the caller's, when it is sane) and echoes it in `x-request-id`, and
 * always a server-generated one too (the audit log's, which a client cannot choose); the
 * edge middleware (src/app.module.ts) calls it first, so every answer and log line carries it.
 */
export function assignRequestId(req: Request, res: Response): { requestId: string; serverRequestId: string } {
  const incoming = req.headers['x-request-id'];
  const serverRequestId = `req_${randomUUID()}`;
  const requestId =
    typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : serverRequestId;
  res.setHeader('x-request-id', requestId);
  return { requestId, serverRequestId };
}
