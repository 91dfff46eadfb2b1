import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GuardedFetch, readCapped, type ResolveAll } from './guarded-fetch.js';
import { SsrfPolicy, SsrfRefusedError } from '../../common/network/ssrf-policy.js';

interface Seen {
  path: string;
  headers: IncomingHttpHeaders;
}

/** A loopback server answering by path; records what it received. */
async function serve(
  handler: (path: string) => { status: number; headers?: Record<string, string>; body?: string },
) {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    seen.push({ path: req.url ?? '', headers: req.headers });
    const answer = handler(req.url ?? '');
    res.writeHead(answer.status, answer.headers).end(answer.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('GuardedFetch', () => {
  const clients: GuardedFetch[] = [];
  const guarded = (allow: Partial<ConstructorParameters<typeof SsrfPolicy>[0]>, resolver?: ResolveAll) => {
    const client = new GuardedFetch(
      new SsrfPolicy({ cidrs: [], hosts: [], hostPorts: [], ...allow }),
      resolver,
    );
    clients.push(client);
    return client;
  };
  let target: Awaited<ReturnType<typeof serve>>;
  /** Resolves every *.test name to loopback, as a hostile or misconfigured DNS server might. */
  const toLoopback: ResolveAll = () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]);

  beforeAll(async () => {
    target = await serve((path) =>
      path === '/big' ? { status: 200, body: 'é'.repeat(5000) } : { status: 200, body: 'secret' },
    );
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await target.close();
  });

  it('refuses a name that resolves to loopback, before connecting', async () => {
    await expect(guarded({}, toLoopback).request(`http://internal.test:${target.port}/`)).rejects.toThrow(
      new SsrfRefusedError(
        `Refused to connect to internal.test (127.0.0.1): a loopback address that tools may not reach`,
      ),
    );
    expect(target.seen).toHaveLength(0);
  });

  it('refuses a name when any of its addresses is not public', async () => {
    const mixed: ResolveAll = () =>
      Promise.resolve([
        { address: '93.184.216.34', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ]);
    await expect(guarded({}, mixed).request(`http://mixed.test:${target.port}/`)).rejects.toThrow(/loopback/);
    expect(target.seen).toHaveLength(0);
  });

  it('connects to the address it checked, keeping the name in the Host header', async () => {
    let lookups = 0;
    const counting: ResolveAll = async (hostname) => {
      lookups += 1;
      return toLoopback(hostname);
    };
    const response = await guarded({ hosts: ['pinned.test'] }, counting).request(
      `http://pinned.test:${target.port}/x`,
    );
    expect(await response.text()).toBe('secret');
    expect(lookups).toBe(1);
    expect(target.seen.at(-1)).toMatchObject({ path: '/x', headers: { host: `pinned.test:${target.port}` } });
  });

  it('refuses non-http schemes', async () => {
    await expect(guarded({}).request('file:///etc/passwd')).rejects.toThrow(SsrfRefusedError);
  });

  it('re-checks every redirect hop and drops credentials when the origin changes', async () => {
    const redirector = await serve((path) =>
      path === '/to-target'
        ? { status: 302, headers: { location: `http://127.0.0.1:${target.port}/after-redirect` } }
        : { status: 200, body: 'ok' },
    );
    try {
      const onlyRedirector = guarded({ hostPorts: [`127.0.0.1:${redirector.port}`] });
      await expect(onlyRedirector.request(`http://127.0.0.1:${redirector.port}/to-target`)).rejects.toThrow(
        /Refused to connect to 127\.0\.0\.1: a loopback address/,
      );
      expect(target.seen.some((s) => s.path === '/after-redirect')).toBe(false);

      const both = guarded({ hostPorts: [`127.0.0.1:${redirector.port}`, `127.0.0.1:${target.port}`] });
      const response = await both.request(`http://127.0.0.1:${redirector.port}/to-target`, {
        headers: { authorization: 'Bearer user-token', 'x-api-key': 'k', 'x-trace': 't' },
        sensitiveHeaders: ['x-api-key'],
      });
      expect(response.status).toBe(200);
      const arrived = target.seen.find((s) => s.path === '/after-redirect');
      expect(arrived?.headers.authorization).toBeUndefined();
      expect(arrived?.headers['x-api-key']).toBeUndefined();
      expect(arrived?.headers['x-trace']).toBe('t');

      const manual = await both.request(`http://127.0.0.1:${redirector.port}/to-target`, {
        redirect: 'manual',
      });
      expect(manual.status).toBe(302);
    } finally {
      await redirector.close();
    }
  });

  it('reads at most the cap, without splitting a character', async () => {
    const response = await guarded({ cidrs: ['127.0.0.1/32'] }).request(
      `http://127.0.0.1:${target.port}/big`,
    );
    const { text, truncated } = await readCapped(response, 1001);
    expect(truncated).toBe(true);
    expect(text).toBe('é'.repeat(500));
  });

  it('sends no trace context to a host unless the caller opts in', async () => {
    const client = guarded({ cidrs: ['127.0.0.1/32'] });
    const trace = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', baggage: 'k=v' };
    await client.request(`http://127.0.0.1:${target.port}/traced`, { headers: trace });
    const seen = target.seen.at(-1)?.headers;
    expect([seen?.traceparent, seen?.baggage]).toEqual([undefined, undefined]);
  });
});
