import { execFile } from 'node:child_process';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { seedGatewayWorld, startOrdersApi, type RecordingApi } from './support/mcp-gateway-fixtures.js';
import { startTestApp, type TestApp } from './support/test-app.js';
import {
  closeServer,
  gatewayOidcEnv,
  startTestIdentityProvider,
  type TestIdentityProvider,
} from './support/test-identity-provider.js';

const run = promisify(execFile);

/** The MCP project's conformance runner (0.1.10: the last release that runs on Node 20). */
const CONFORMANCE = fileURLToPath(
  new URL('../node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url),
);

/**
 * The gateway against the MCP project's own conformance scenarios. The runner's client has no
 * OAuth support, so a loopback proxy adds the bearer token an IDE would have obtained (the token
 * itself comes from the Authorization Code + PKCE flow of a real OpenID provider).
 */
describe('MCP gateway: the MCP conformance scenarios', () => {
  let idp: TestIdentityProvider;
  let api: RecordingApi;
  let app: TestApp;
  let signedIn: Server;
  let gatewayUrl: string;

  beforeAll(async () => {
    idp = await startTestIdentityProvider({ alice: ['/acme/engineering'] });
    api = await startOrdersApi();
    app = await startTestApp({ ...gatewayOidcEnv(idp), SSRF_ALLOWLIST: new URL(api.url).host });
    const world = await seedGatewayWorld(app, api);
    const { access_token } = await idp.authorizationCodeFlow({
      user: 'alice',
      resource: `${app.baseUrl}/mcp-gateway/${world.acme.gateway}`,
    });
    const backend = new URL(app.baseUrl);
    signedIn = createServer((req, res) => {
      const upstream = httpRequest(
        {
          host: backend.hostname,
          port: backend.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: backend.host, authorization: `Bearer ${access_token}` },
        },
        (reply) => {
          res.writeHead(reply.statusCode ?? 502, reply.headers);
          reply.pipe(res);
        },
      );
      upstream.on('error', () => res.writeHead(502).end());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => signedIn.listen(0, '127.0.0.1', resolve));
    gatewayUrl = `http://127.0.0.1:${(signedIn.address() as AddressInfo).port}/mcp-gateway/${world.acme.gateway}`;
  }, 120_000);

  afterAll(async () => {
    if (signedIn) await closeServer(signedIn);
    await app?.close();
    await Promise.all([idp?.close(), api?.close()]);
  });

  it.each(['server-initialize', 'ping', 'tools-list'])('passes %s', async (scenario) => {
    const { stdout } = await run(
      process.execPath,
      [CONFORMANCE, 'server', '--url', gatewayUrl, '--scenario', scenario],
      { timeout: 60_000 },
    );
    expect(stdout).toMatch(/Passed: [1-9]\d*\/\d+, 0 failed/);
  });
});
