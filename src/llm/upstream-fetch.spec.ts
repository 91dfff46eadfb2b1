import http from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { ChatCompletionChunks } from './chat-completion-chunks.js';
import { upstreamBody, upstreamFetch, withoutUnsentSdkHeaders } from './upstream-fetch.js';

const chunk = (content: string) => ({ id: 'c1', choices: [{ index: 0, delta: { content } }] });

describe('upstreamFetch', () => {
  let server: http.Server;
  let base: string;
  const sockets = new Set<unknown>();

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      sockets.add(req.socket);
      if (req.url === '/echo') {
        let received = '';
        req.setEncoding('utf8');
        req.on('data', (text: string) => (received += text));
        req.on('end', () => {
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({ length: req.headers['content-length'], tag: req.headers['x-tag'], received }),
          );
        });
        return;
      }
      if (req.url === '/v1/chat/completions' || req.url === '/v1/embeddings' || req.url === '/v1/models') {
        req.resume();
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'headers', sent: Object.keys(req.headers).sort() } }));
        return;
      }
      if (req.url === '/error') {
        res.writeHead(400, {
          'content-type': 'application/json',
          'x-request-id': 'req_1',
          'x-multi': ['a', 'b'],
        });
        res.end('{"error":{"message":"bad","param":"top_p"}}');
        return;
      }
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'x-request-id': 'req_2',
        'openai-processing-ms': '12',
      });
      res.write(`data: ${JSON.stringify(chunk('hé'))}\n\n`);
      res.end(`data: ${JSON.stringify(chunk('llo'))}\n\ndata: [DONE]\n\n`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('hands the SDK a bodiless Response and the turn the stream behind it, on one kept-alive connection', async () => {
    const fetch = upstreamFetch();
    for (let turn = 0; turn < 3; turn++) {
      const response = await fetch(`${base}/stream`, {
        method: 'POST',
        headers: new Headers({ 'content-type': 'application/json' }),
        body: '{}',
      });
      expect(response.status).toBe(200);
      // What the SDK reads of a success (its log line's request id); nothing else is copied.
      expect([...response.headers]).toEqual([
        ['content-type', 'text/event-stream'],
        ['x-request-id', 'req_2'],
      ]);
      const batches: unknown[] = [];
      const reader = new ChatCompletionChunks(upstreamBody(response)!);
      for (let batch = reader.read(); batch !== undefined; batch = reader.read())
        if (batch === null) await reader.readable();
        else batches.push(...batch);
      reader.release();
      expect(batches).toEqual([chunk('hé'), chunk('llo')]);
      // undici hands a kept-alive socket back one event-loop cycle after the answer's end
      // (setImmediate in its HTTP/1.1 client); a turn storing its answer always takes that long.
      // Not a timed wait: the next check phase, after undici's own callback, which was queued first.
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(sockets.size).toBe(1);
  });

  it('sends the body with its byte length, whatever form the headers take', async () => {
    const body = JSON.stringify({ x: 'héllo 😀 日本' });
    for (const headers of [
      { 'x-tag': 'object', 'Content-Length': '3' },
      [['x-tag', 'pairs']] as [string, string][],
      new Headers({ 'x-tag': 'headers', 'content-length': '3' }),
    ]) {
      const response = await upstreamFetch()(`${base}/echo`, { method: 'POST', headers, body });
      const tag = headers instanceof Headers ? 'headers' : Array.isArray(headers) ? 'pairs' : 'object';
      expect(await response.json()).toEqual({ length: String(Buffer.byteLength(body)), tag, received: body });
    }
  });

  it('gives an error answer its text, status and headers', async () => {
    const response = await upstreamFetch()(`${base}/error`, { method: 'POST', body: '{}' });
    expect(response.ok).toBe(false);
    expect(response.status).toBe(400);
    expect(response.headers.get('x-request-id')).toBe('req_1');
    // A repeated header reaches the SDK as one value, as fetch would give it; no name is lost.
    expect(response.headers.get('x-multi')).toBe('a, b');
    expect(await response.json()).toEqual({ error: { message: 'bad', param: 'top_p' } });
  });

  it("sends none of the SDK's headers that state a timeout, a retry count or the gateway's machine", async () => {
    const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'k', maxRetries: 0, fetch: upstreamFetch() });
    const error = await client.chat.completions
      .create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const sent = ((error as InstanceType<typeof OpenAI.BadRequestError>).error as { sent: string[] }).sent;
    expect(sent).toEqual([
      'accept',
      'authorization',
      'connection',
      'content-length',
      'content-type',
      'host',
      'user-agent',
      'x-stainless-lang',
      'x-stainless-package-version',
    ]);
  });

  it('leaves them out of a bodiless request, and out of an embedder on a fetch of its own', async () => {
    const sentBy = async (call: Promise<unknown>) => {
      const error = await call.catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      return ((error as InstanceType<typeof OpenAI.BadRequestError>).error as { sent: string[] }).sent;
    };
    const ours = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'k', maxRetries: 0, fetch: upstreamFetch() });
    const embedder = new OpenAI({
      baseURL: `${base}/v1`,
      apiKey: 'k',
      maxRetries: 0,
      fetch: withoutUnsentSdkHeaders(globalThis.fetch),
    });
    for (const sent of [
      await sentBy(ours.models.list()),
      await sentBy(embedder.embeddings.create({ model: 'e', input: ['a'] })),
    ]) {
      expect(sent.filter((name) => name.startsWith('x-stainless-'))).toEqual([
        'x-stainless-lang',
        'x-stainless-package-version',
      ]);
    }
  });
});
