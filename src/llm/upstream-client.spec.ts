import { jest } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { upstreamClient } from './upstream-client.js';
import { upstreamFetch } from './upstream-fetch.js';

describe('upstreamClient', () => {
  let server: http.Server;
  let base: string;
  const received: http.IncomingHttpHeaders[] = [];
  const saved = { ...process.env };

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      received.push(req.headers);
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });

  afterAll(async () => {
    process.env = saved;
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("sends nothing the service's environment says to the SDK, and logs nothing beside the service", async () => {
    process.env.OPENAI_ORG_ID = 'org-of-the-platform';
    process.env.OPENAI_PROJECT_ID = 'proj-of-the-platform';
    process.env.OPENAI_LOG = 'debug';
    const written = jest.spyOn(console, 'debug').mockImplementation(() => undefined);
    const logged = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      const client = upstreamClient({
        baseURL: base,
        apiKey: 'k',
        fetch: upstreamFetch(),
        maxRetries: 0,
        timeout: 5000,
      });
      // A success reaches the SDK bodiless (upstreamFetch): the raw Response is all this call needs.
      await client.models.list().asResponse();
      expect(received).toHaveLength(1);
      expect(received[0]['openai-organization']).toBeUndefined();
      expect(received[0]['openai-project']).toBeUndefined();
      expect(received[0].authorization).toBe('Bearer k');
      expect(written).not.toHaveBeenCalled();
      expect(logged).not.toHaveBeenCalled();
    } finally {
      written.mockRestore();
      logged.mockRestore();
    }
  });
});
