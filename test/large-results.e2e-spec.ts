import { randomBytes } from 'node:crypto';
import { toFile } from 'openai';
import { sdkClient } from './support/sdk-client.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

/**
 * Answers larger than a socket's buffers. The embedded database's wire server once handed the
 * socket views of PGlite's reused output buffer: a write the socket had to queue was overwritten
 * by the next one, so an answer of a few megabytes reached the client garbled and it waited
 * forever (bench:knowledge's exact scan, 12 MB of embeddings). Runs on both databases.
 */
describe('large answers from the database', () => {
  let app: TestApp;
  let org: SeededOrganization;

  beforeAll(async () => {
    app = await startTestApp();
    org = await app.seedOrganization('large-results');
  });
  afterAll(async () => {
    await app?.close();
  });

  it('downloads a file of 8 MiB byte for byte, twice', async () => {
    const client = sdkClient(app.baseUrl, org.keys.user);
    // Random bytes: read back as 16 MiB of hex in the row, far beyond a loopback socket's buffers.
    const bytes = randomBytes(8 * 1024 * 1024);
    const file = await client.files.create({
      file: await toFile(bytes, 'archive.bin', { type: 'application/octet-stream' }),
      purpose: 'assistants',
    });
    for (let i = 0; i < 2; i++) {
      const content = Buffer.from(await (await client.files.content(file.id)).arrayBuffer());
      expect(content.length).toBe(bytes.length);
      expect(content.equals(bytes)).toBe(true);
    }
  }, 120_000);
});
