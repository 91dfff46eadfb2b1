import OpenAI, { toFile } from 'openai';
import { FakeUpstream } from './support/fake-upstream.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';
import { sdkClient } from './support/sdk-client.js';

const NOTES = 'Release plan: ship version 4.2 on the second Friday of March.\n';

/**
 * `input_file` with a `file_id` (files uploaded to /v1/files), as the official SDK sends it: the
 * model gets the file's extracted text; the stored input shows the part as sent; a file the
 * caller may not see (another organization's, another end user's `user_data`) is a 404 naming
 * the field.
 */
describe('POST /v1/responses with input_file file_id', () => {
  let app: TestApp;
  let upstream: FakeUpstream;
  let orgA: SeededOrganization;
  let orgB: SeededOrganization;
  let upstreamOrg: SeededOrganization;
  const sdk = (key: string, userId?: string) => sdkClient(app.baseUrl, key, userId);
  let notesId: string;

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    app = await startTestApp({ UPSTREAM_MAX_RETRIES: '0' });
    orgA = await app.seedOrganization('file-id-a');
    orgB = await app.seedOrganization('file-id-b');
    // An upstream model without the fileInput setting: file_id parts reach it as text.
    upstreamOrg = await app.seedOrganization('file-id-upstream', {
      provider: 'openai-compatible',
      baseUrl: upstream.url,
      model: 'fake',
    });
    const notes = await sdk(orgA.keys.user, 'alice').files.create({
      file: await toFile(Buffer.from(NOTES), 'plan.md'),
      purpose: 'user_data',
    });
    notesId = notes.id;
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.stop();
  });

  const ask = (org: SeededOrganization, fileId: string, userId?: string) =>
    sdk(org.keys.full_access, userId).responses.create({
      model: `asst_${org.assistantId}`,
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'When do we ship? ' },
            { type: 'input_file', file_id: fileId },
          ],
        },
      ],
    });

  it("gives the model the file's text and stores the part as sent", async () => {
    const client = sdk(orgA.keys.user);
    const uploaded = await client.files.create({
      file: await toFile(Buffer.from(NOTES), 'plan.md'),
      purpose: 'assistants',
    });
    const response = await ask(orgA, uploaded.id);
    expect(response.status).toBe('completed');
    // The offline model says back what it received.
    expect(response.output_text).toContain('Release plan: ship version 4.2 on the second Friday of March.');
    expect(response.output_text).toContain('plan.md');
    const items = await client.responses.inputItems.list(response.id);
    expect(items.data).toEqual([
      expect.objectContaining({
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'When do we ship? ' },
          { type: 'input_file', file_id: uploaded.id },
        ],
      }),
    ]);
  });

  it('sends the text to an upstream model that does not take files', async () => {
    const uploaded = await sdk(upstreamOrg.keys.user).files.create({
      file: await toFile(Buffer.from(NOTES), 'plan.md'),
      purpose: 'assistants',
    });
    upstream.script({ text: 'In March.' });
    const response = await ask(upstreamOrg, uploaded.id);
    expect(response.output_text).toBe('In March.');
    const user = upstream.last.body.messages.find((message: { role: string }) => message.role === 'user');
    expect(user.content).toEqual([
      { type: 'text', text: 'When do we ship? ' },
      { type: 'text', text: `[file plan.md (${uploaded.id})]\n${NOTES}` },
    ]);
  });

  it("refuses another organization's file, another end user's user_data and an unknown id as 404 naming the field", async () => {
    for (const attempt of [
      () => ask(orgB, notesId, 'alice'),
      () => ask(orgA, notesId, 'bob'),
      () => ask(orgA, notesId),
      () => ask(orgA, 'file-00000000-0000-4000-8000-000000000000', 'alice'),
      () => ask(orgA, 'not-a-file', 'alice'),
    ]) {
      const error = await attempt().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      const { status, code, message } = error as InstanceType<typeof OpenAI.NotFoundError>;
      expect({ status, code }).toEqual({ status: 404, code: 'file_not_found' });
      expect(message).toMatch(/^404 input\[0\]\.content\[1\]\.file_id: no file /);
    }
    // Its owner, the end user who uploaded it, may use it.
    const response = await ask(orgA, notesId, 'alice');
    expect(response.output_text).toContain('second Friday of March');
  });
});
