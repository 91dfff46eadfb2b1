import { connect } from 'node:net';

export interface RawReply {
  /** 0 when the server closed the connection without a status line. */
  status: number;
  headers: Record<string, string>;
  /** Parsed JSON, or the raw text when the body is not JSON. */
  body: any;
  /** Everything the server sent. */
  raw: string;
}

/**
 * Sends bytes exactly as given over a fresh TCP connection (what no HTTP client lets a test
 * send: bare CR or LF, NUL in a header, conflicting lengths, broken chunking) and reads until
 * the server closes the connection or one whole reply has arrived.
 */
export function rawRequest(baseUrl: string, request: string | Buffer): Promise<RawReply> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    // Written, not ended: a half-close would make Node abort a request it is still answering.
    const socket = connect(Number(port), hostname, () => socket.write(request));
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      // A complete reply is enough: do not wait for a keep-alive connection to time out.
      if (isComplete(Buffer.concat(chunks).toString('latin1'))) socket.destroy();
    });
    // A reset after the reply was read (the server destroyed the socket) still counts as the reply.
    socket.on('error', (error) => (chunks.length > 0 ? undefined : reject(error)));
    socket.on('close', () => resolve(parseReply(Buffer.concat(chunks).toString('utf8'))));
  });
}

function parseReply(raw: string): RawReply {
  const split = raw.indexOf('\r\n\r\n');
  const head = split === -1 ? raw : raw.slice(0, split);
  const text = split === -1 ? '' : raw.slice(split + 4);
  const [statusLine, ...lines] = head.split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body: unknown = text;
  try {
    body = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status, headers, body, raw };
}

/** One whole reply: its head, and a body of its Content-Length or a last chunk. */
function isComplete(raw: string): boolean {
  const split = raw.indexOf('\r\n\r\n');
  if (split === -1) return false;
  const head = raw.slice(0, split).toLowerCase();
  const body = raw.slice(split + 4);
  const length = /\r\ncontent-length: *(\d+)/.exec(head)?.[1];
  if (length !== undefined) return Buffer.byteLength(body, 'latin1') >= Number(length);
  if (/\r\ntransfer-encoding: *chunked/.test(head)) return body.endsWith('0\r\n\r\n');
  return /^http\/1\.[01] (204|304)/.test(head);
}
