import type { Request } from 'express';

/** Reads the key from `x-api-key` or `Authorization: Bearer`; the two are equivalent. */
export function presentedApiKey(req: Request): string | undefined {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string' && header.length > 0) return header.trim();
  const authorization = req.headers.authorization;
  if (authorization) {
    const match = /^Bearer\s+(.+)$/i.exec(authorization);
    return match ? match[1].trim() : authorization.trim();
  }
  return undefined;
}
