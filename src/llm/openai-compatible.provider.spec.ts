import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { ModelEvent } from './llm.types.js';
import { OpenAiCompatibleProvider } from './openai-compatible.provider.js';

const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c1', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

describe('OpenAiCompatibleProvider: its clients', () => {
  let server: http.Server;
  let base: string;
  let releaseSlow: () => void = () => undefined;
  /** The sockets each path prefix (one per client) was answered on, and those that closed. */
  const socketsOf = new Map<string, Set<Socket>>();
  const closed = new Set<Socket>();

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const prefix = (req.url ?? '').split('/')[1];
      const sockets = socketsOf.get(prefix) ?? new Set<Socket>();
      socketsOf.set(prefix, sockets);
      sockets.add(req.socket);
      req.socket.once('close', () => closed.add(req.socket));
      req.resume();
      // Idle connections would stay open for ten minutes (undici keeps them as long as told, up to that).
      res.writeHead(200, { 'content-type': 'text/event-stream', 'keep-alive': 'timeout=600' });
      if (prefix !== 'slow') {
        res.end(chunk({ content: 'ok' }, 'stop') + 'data: [DONE]\n\n');
        return;
      }
      res.write(chunk({ content: 'hello' }));
      releaseSlow = () => res.end(chunk({ content: ' world' }, 'stop') + 'data: [DONE]\n\n');
    });
    // Neither side closes an idle connection by itself while the test runs.
    server.keepAliveTimeout = 600_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  // The bound is UPSTREAM_MAX_CLIENTS (default 256); a small one keeps the test short.
  const MAX_CLIENTS = 16;
  const provider = new OpenAiCompatibleProvider({
    headersTimeoutMs: 5000,
    firstTokenTimeoutMs: 5000,
    stallTimeoutMs: 5000,
    maxRetries: 0,
    retryBudgetMs: 0,
    maxClients: MAX_CLIENTS,
  });
  let clientsClosed = 0;
  provider.observeClientClosed(() => clientsClosed++);
  const call = (prefix: string) =>
    provider.stream({
      settings: {
        provider: 'openai-compatible',
        baseUrl: `${base}/${prefix}/v1`,
        model: 'm',
        functionCalling: false,
      },
      messages: [{ role: 'user', content: 'hi' }],
      tools: [],
      options: {},
      signal: new AbortController().signal,
    });
  const textOf = (batches: ModelEvent[][]) =>
    batches
      .flat()
      .map((event) => (event.type === 'text' ? event.delta : ''))
      .join('');

  it('keeps at most its bound of upstream clients, closing the least recently used once its calls end', async () => {
    const slow = call('slow')[Symbol.asyncIterator]();
    const first = await slow.next();
    expect(textOf([first.value as ModelEvent[]])).toBe('hello');

    // MAX_CLIENTS other upstreams (an organization admin may write as many base URLs as it likes):
    // the last one's client pushes out the least recently used, the one whose stream is still open.
    for (let i = 0; i < MAX_CLIENTS; i++) {
      const batches: ModelEvent[][] = [];
      for await (const batch of call(`u${i}`)) batches.push(batch);
      expect(textOf(batches)).toBe('ok');
    }
    expect(clientsClosed).toBe(1);

    // The call in flight on the closed client still ends whole.
    releaseSlow();
    const rest: ModelEvent[][] = [];
    for (let next = await slow.next(); !next.done; next = await slow.next()) rest.push(next.value);
    expect(textOf(rest)).toBe(' world');

    // One more upstream closes the next least recently used client, and with it its idle connection.
    for await (const batch of call('extra')) expect(textOf([batch])).toBe('ok');
    expect(clientsClosed).toBe(2);
    const [oldest] = socketsOf.get('u0') ?? [];
    await new Promise<void>((resolve) => (closed.has(oldest) ? resolve() : oldest.once('close', resolve)));
    // Clients still kept keep their connections open for the next call.
    const [recent] = socketsOf.get(`u${MAX_CLIENTS - 1}`) ?? [];
    expect(closed.has(recent)).toBe(false);

    // The upstream whose client was closed gets a new one on its next call.
    const again = call('slow')[Symbol.asyncIterator]();
    const opening = await again.next();
    releaseSlow();
    const batches = [opening.value as ModelEvent[]];
    for (let next = await again.next(); !next.done; next = await again.next()) batches.push(next.value);
    expect(textOf(batches)).toBe('hello world');
  });
});
