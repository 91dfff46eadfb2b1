import OpenAI, { toFile } from 'openai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminCli } from '../support/admin-cli.js';
import { letterVector } from '../support/embeddings-endpoint.js';
import { startTestApp, type SeededOrganization, type TestApp } from '../support/test-app.js';
import { json, startLocalServer, type LocalServer } from '../support/tools-local-servers.js';

/**
 * An organization's embeddings endpoint (platform-only, set by `apply -f`) is reached through the
 * SSRF guard like every other outbound call of the organization's configuration: an endpoint on
 * a loopback or private address is refused unless the platform allowed that host (SSRF_ALLOWLIST,
 * or the organization's `ssrfAllowlist`). Nothing is sent, and nothing of the address reaches the
 * file's `last_error` or the usage.
 */
describe("the organization's embeddings endpoint behind the SSRF guard", () => {
  let app: TestApp;
  let endpoint: LocalServer;
  let refused: SeededOrganization;
  let allowed: SeededOrganization;
  let workDir: string;
  const cli = adminCli(() => ({ ...app.database.env }));
  const embeddingCalls = () => endpoint.requests.filter((request) => request.url === '/v1/embeddings');
  const sdk = (org: SeededOrganization) =>
    new OpenAI({ apiKey: org.keys.user, baseURL: `${app.baseUrl}/v1`, maxRetries: 0 });

  beforeAll(async () => {
    endpoint = await startLocalServer((request, res) => {
      const input: string[] = JSON.parse(request.body).input;
      json(res, 200, {
        object: 'list',
        data: input.map((text, index) => ({ object: 'embedding', index, embedding: letterVector(text, 8) })),
        usage: { prompt_tokens: input.length, total_tokens: input.length },
      });
    });
    // No SSRF_ALLOWLIST: loopback is private to every organization unless the platform allows it.
    app = await startTestApp({ VECTOR_STORE_INGEST_POLL_MS: '50' });
    refused = await app.seedOrganization('embed-reach-refused');
    allowed = await app.seedOrganization('embed-reach-allowed');
    workDir = await mkdtemp(join(tmpdir(), 'switchboard-embed-reach-'));
    const embeddings = { baseUrl: `${endpoint.origin}/v1`, model: 'reach-embed', dimensions: 8 };
    const file = join(workDir, 'orgs.json');
    await writeFile(
      file,
      JSON.stringify({
        organizations: [
          { slug: refused.slug, embeddings },
          { slug: allowed.slug, embeddings, ssrfAllowlist: [`127.0.0.1:${endpoint.port}`] },
        ],
      }),
    );
    await cli.ok('apply', '-f', file);
  });
  afterAll(async () => {
    await app?.close();
    await endpoint?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('refuses a loopback endpoint the platform did not allow: the file fails, search uses words, nothing is sent', async () => {
    const files = sdk(refused);
    const store = await files.vectorStores.create({ name: 'Refused' });
    const file = await files.vectorStores.files.uploadAndPoll(
      store.id,
      await toFile(Buffer.from('Lions sleep most of the day.'), 'lions.md'),
      { pollIntervalMs: 100 },
    );
    expect(file.status).toBe('failed');
    expect(file.last_error).toEqual({
      code: 'server_error',
      message: "The organization's embeddings endpoint failed",
    });
    const page = await files.vectorStores.search(store.id, { query: 'lions' });
    expect(page.data).toEqual([]);
    expect(embeddingCalls()).toEqual([]);
    // A call that was never made costs nothing: no usage recorded.
    const rows = await app.dataSource.query('SELECT * FROM usage_hourly WHERE organization_id = $1', [
      refused.id,
    ]);
    expect(rows).toEqual([]);
  }, 120_000);

  it("reaches it for the organization whose allowlist the platform set to the endpoint's host", async () => {
    const files = sdk(allowed);
    const store = await files.vectorStores.create({ name: 'Allowed' });
    const file = await files.vectorStores.files.uploadAndPoll(
      store.id,
      await toFile(Buffer.from('Lions sleep most of the day.'), 'lions.md'),
      { pollIntervalMs: 100 },
    );
    expect(file.status).toBe('completed');
    const page = await files.vectorStores.search(store.id, { query: 'lions' });
    expect(page.data.map((result) => result.filename)).toEqual(['lions.md']);
    expect(embeddingCalls().length).toBe(2);
  });
});
