import type { Request, Response } from 'express';
import { ApiError } from '../common/errors/error-catalogue.js';
import { bodyError, jsonBodyReader } from '../common/http/request-edge.middleware.js';
import { checkStorableJson } from '../common/http/storable-text.js';

/**
 * The gateway's JSON-RPC POST reads its body only after the guard (Origin, gateway, token): an
 * unauthenticated request is refused with nothing of its body read or parsed. The global body
 * parser skips it (same matching as Express: case-insensitive, optional trailing slash).
 */
export function isGatewayMessagePost(req: Request): boolean {
  // The original URL: inside Nest's middleware chain `req.path` is relative to its mount point.
  const path = req.originalUrl.split('?', 1)[0];
  return req.method === 'POST' && /^\/mcp-gateway\/[^/]+\/?$/i.test(path);
}

/** JSON-RPC 2.0 error codes of the body, after authentication. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
/** The MCP SDK's code for transport-level refusals (413, 415). */
const TRANSPORT_ERROR = -32000;

export class GatewayMessageBody {
  private readonly read: (req: Request, res: Response) => Promise<void>;

  constructor(limitBytes: number) {
    this.read = jsonBodyReader(limitBytes);
  }

  /**
   * Parses the body into `req.body` (left undefined for another media type: the MCP transport
   * answers 415), or answers a JSON-RPC error as MCP clients expect and returns false.
   */
  async readInto(req: Request, res: Response): Promise<boolean> {
    try {
      await this.read(req, res);
    } catch (error) {
      const apiError = bodyError(error);
      if (apiError.code === 'payload_too_large') {
        return reply(res, 413, TRANSPORT_ERROR, `Request body too large: ${apiError.message}`);
      }
      return reply(res, 400, PARSE_ERROR, 'Parse error: Invalid JSON');
    }
    try {
      if (req.body !== undefined) checkStorableJson(req.body);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      return reply(res, 400, INVALID_REQUEST, `Invalid Request: ${error.message}`);
    }
    return true;
  }
}

function reply(res: Response, status: number, code: number, message: string): false {
  res.status(status).json({ jsonrpc: '2.0', id: null, error: { code, message } });
  return false;
}
