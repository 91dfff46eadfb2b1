import OpenAI from 'openai';
import { FakeUpstream } from './support/fake-upstream.js';
import { call } from './support/http.js';
import { expectValidItem } from './support/open-responses.js';
import { postStream } from './support/sse.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';
import { startLocalServer, type LocalServer } from './support/tools-local-servers.js';

/** A 1×1 PNG (68 bytes). */
const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const PNG = Buffer.from(PNG_BASE64, 'base64');
const PNG_DATA_URL = `data:image/png;base64,${PNG_BASE64}`;
const NOTES = Buffer.from('Meeting notes: ship on Friday.\n');

/**
 * Images and files in user messages (issue 13, item 7): what the client sends, what the upstream
 * receives as Chat Completions parts, what the thread keeps, and every refusal by name. The
 * service fetches URLs itself through the SSRF guard (one local server is allow-listed; the
 * "internal" one must never be reached) and sends the bytes inline.
 */
describe('POST /v1/responses with input_image and input_file parts', () => {
  let app: TestApp;
  let upstream: FakeUpstream;
  let files: LocalServer;
  let internal: LocalServer;
  let vision: SeededOrganization;
  let blind: SeededOrganization;
  let offline: SeededOrganization;

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    internal = await startLocalServer((_request, res) => void res.writeHead(200).end('internal secret'));
    files = await startLocalServer((request, res) => {
      if (request.url === '/cat.png')
        return void res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
      if (request.url === '/big.png') {
        return void res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(3000, 1));
      }
      if (request.url === '/page.html')
        return void res.writeHead(200, { 'content-type': 'text/html' }).end('<p>');
      if (request.url === '/docs/notes.txt') {
        return void res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(NOTES);
      }
      if (request.url === '/to-internal') {
        return void res.writeHead(302, { location: `${internal.origin}/secret.png` }).end();
      }
      res.writeHead(404).end();
    });
    app = await startTestApp({
      UPSTREAM_MAX_RETRIES: '0',
      SSRF_ALLOWLIST: `127.0.0.1:${files.port}`,
      INPUT_IMAGE_MAX_BYTES: '2kb',
      INPUT_FILE_MAX_BYTES: '2kb',
    });
    const upstreamModel = { provider: 'openai-compatible', baseUrl: upstream.url, model: 'fake-vision' };
    vision = await app.seedOrganization('vision', { ...upstreamModel, vision: true, fileInput: true });
    blind = await app.seedOrganization('blind', upstreamModel);
    offline = await app.seedOrganization('offline');
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.stop();
    await Promise.all([files, internal].map((server) => server?.close()));
  });
  afterEach(() => expect(internal.requests).toEqual([]));

  const respond = (org: SeededOrganization, body: Record<string, unknown>) =>
    call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.assistant,
      body: { model: `asst_${org.assistantId}`, ...body },
    });
  const userMessage = (...content: Record<string, unknown>[]) => [{ role: 'user', content }];
  const text = (value: string) => ({ type: 'input_text', text: value });
  const image = (url: string, detail?: string) => ({ type: 'input_image', image_url: url, detail });
  it('sends a data-URL image to the upstream as an image_url part, and keeps it in the thread', async () => {
    upstream.script({ text: 'A tiny picture.' }, { text: 'Still the tiny picture.' });
    const first = await respond(vision, {
      input: userMessage(text('What is this?'), image(PNG_DATA_URL, 'low')),
    });
    expect(first.status).toBe(200);
    expect(first.body.output_text).toBe('A tiny picture.');
    const sent = [
      { type: 'text', text: 'What is this?' },
      { type: 'image_url', image_url: { url: PNG_DATA_URL, detail: 'low' } },
    ];
    expect(upstream.last.body.messages.at(-1)).toEqual({ role: 'user', content: sent });

    // The next turn on the thread still shows the model the image.
    const second = await respond(vision, { input: 'And now?', previous_response_id: first.body.id });
    expect(second.status).toBe(200);
    expect(upstream.last.body.messages.slice(-3)).toEqual([
      { role: 'user', content: sent },
      { role: 'assistant', content: 'A tiny picture.' },
      { role: 'user', content: 'And now?' },
    ]);
    // Chat history keeps the text the user typed.
    const [message] = await app.dataSource.query(
      "SELECT content FROM messages WHERE response_id = $1 AND role = 'user'",
      [first.body.id.slice(5)],
    );
    expect(message.content).toBe('What is this?');
  });

  it('fetches an image URL through the allow-list and sends its bytes inline', async () => {
    upstream.script({ text: 'Fetched.' });
    const reply = await respond(vision, { input: userMessage(image(`${files.origin}/cat.png`)) });
    expect(reply.status).toBe(200);
    expect(files.requests.at(-1)?.url).toBe('/cat.png');
    expect(upstream.last.body.messages.at(-1).content).toEqual([
      { type: 'image_url', image_url: { url: PNG_DATA_URL, detail: 'auto' } },
    ]);
  });

  it('sends files, inline or fetched, as Chat Completions file parts', async () => {
    upstream.script({ text: 'Read both.' });
    const reply = await respond(vision, {
      input: userMessage(
        text('Summarize'),
        { type: 'input_file', filename: 'report.pdf', file_data: PNG_BASE64 },
        { type: 'input_file', file_url: `${files.origin}/docs/notes.txt` },
      ),
    });
    expect(reply.status).toBe(200);
    expect(upstream.last.body.messages.at(-1).content).toEqual([
      { type: 'text', text: 'Summarize' },
      {
        type: 'file',
        file: { filename: 'report.pdf', file_data: `data:application/pdf;base64,${PNG_BASE64}` },
      },
      {
        type: 'file',
        file: { filename: 'notes.txt', file_data: `data:text/plain;base64,${NOTES.toString('base64')}` },
      },
    ]);
  });

  it('lets the offline model describe images and files, streamed too', async () => {
    const input = userMessage(text('Look'), image(PNG_DATA_URL), {
      type: 'input_file',
      filename: 'notes.txt',
      file_data: `data:text/plain;base64,${NOTES.toString('base64')}`,
    });
    const expected = `You said: Look You sent an image (image/png, ${PNG.length} bytes). You sent the file notes.txt (text/plain, ${NOTES.length} bytes).`;
    const reply = await respond(offline, { input });
    expect(reply.body.output_text).toBe(expected);
    const stream = await postStream(app.baseUrl, offline.keys.assistant, {
      model: `asst_${offline.assistantId}`,
      input,
    });
    expect(stream.events.find((event) => event.event === 'response.output_text.done')?.json.text).toBe(
      expected,
    );
  });

  it('works with the official SDK', async () => {
    // Creating and reading back: full_access (the `assistant` scope only creates).
    const client = new OpenAI({
      apiKey: offline.keys.full_access,
      baseURL: `${app.baseUrl}/v1`,
      maxRetries: 0,
    });
    const response = await client.responses.create({
      model: `asst_${offline.assistantId}`,
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Hi' },
            { type: 'input_image', image_url: PNG_DATA_URL, detail: 'high' },
          ],
        },
      ],
    });
    expect(response.output_text).toBe(`You said: Hi You sent an image (image/png, ${PNG.length} bytes).`);
    const items = await client.responses.inputItems.list(response.id);
    expect(items.data).toHaveLength(1);
    expectValidItem(items.data[0]);
    expect(items.data[0]).toMatchObject({
      type: 'message',
      role: 'user',
      content: [
        { type: 'input_text', text: 'Hi' },
        { type: 'input_image', image_url: PNG_DATA_URL, detail: 'high' },
      ],
    });
  });

  describe('refusals name the parameter and store nothing', () => {
    // Every organization's responses: the cases go through `blind` and `vision` alike.
    const allResponses = async () =>
      (await app.dataSource.query<{ n: number }[]>('SELECT count(*)::int AS n FROM responses'))[0].n;
    let before: number;
    beforeEach(async () => {
      before = await allResponses();
    });
    afterEach(async () => {
      expect(await allResponses()).toBe(before);
    });

    it.each([
      [
        'an image the model cannot see',
        () => respond(blind, { input: userMessage(text('x'), image(PNG_DATA_URL)) }),
        'input[0].content[1] (input_image): the model behind this assistant does not take images (its model setting vision is off)',
      ],
      [
        'a file the model cannot read',
        () =>
          respond(blind, {
            input: userMessage({ type: 'input_file', filename: 'a.txt', file_data: 'aGk=' }),
          }),
        'input[0].content[0] (input_file): the model behind this assistant does not take files (its model setting fileInput is off)',
      ],
      [
        'an oversized inline image',
        () =>
          respond(vision, {
            input: userMessage(image(`data:image/png;base64,${Buffer.alloc(3000).toString('base64')}`)),
          }),
        'input[0].content[0].image_url is larger than 2048 bytes, the limit for this service (INPUT_IMAGE_MAX_BYTES)',
      ],
      [
        'an oversized fetched image',
        () => respond(vision, { input: userMessage(image(`${files.origin}/big.png`)) }),
        'input[0].content[0].image_url is larger than 2048 bytes, the limit for this service (INPUT_IMAGE_MAX_BYTES)',
      ],
      [
        'an image URL on a non-public address',
        () => respond(vision, { input: userMessage(image(`${internal.origin}/secret.png`)) }),
        `input[0].content[0].image_url was not fetched: the address is not allowed`,
      ],
      [
        'an allowed URL redirecting to a non-public address',
        () =>
          respond(vision, {
            input: userMessage({ type: 'input_file', file_url: `${files.origin}/to-internal` }),
          }),
        `input[0].content[0].file_url was not fetched: the address is not allowed`,
      ],
      [
        'a URL that is not an image',
        () => respond(vision, { input: userMessage(image(`${files.origin}/page.html`)) }),
        'input[0].content[0].image_url answered text/html; a PNG, JPEG, GIF or WebP image is needed',
      ],
      [
        'a URL that answers 404',
        () => respond(vision, { input: userMessage(image(`${files.origin}/missing.png`)) }),
        'input[0].content[0].image_url was not fetched: it answered HTTP 404',
      ],
      [
        'an image by file_id (not yet taken)',
        () => respond(vision, { input: userMessage({ type: 'input_image', file_id: 'file-123' }) }),
        'input[0].content[0].file_id is not supported in input_image parts yet: send image_url',
      ],
      [
        'an image in an assistant message',
        () => respond(vision, { input: [{ role: 'assistant', content: [image(PNG_DATA_URL)] }] }),
        'input[0].content[0] (input_image) is accepted only in user messages',
      ],
      [
        'a data URL that is not an image',
        () => respond(vision, { input: userMessage(image('data:text/plain;base64,aGk=')) }),
        'input[0].content[0].image_url must be a base64 data URL of a PNG, JPEG, GIF or WebP image',
      ],
      [
        'an unknown detail',
        () => respond(vision, { input: userMessage(image(PNG_DATA_URL, 'ultra')) }),
        'input[0].content[0].detail must be "low", "high" or "auto"',
      ],
      [
        'a file with both data and URL',
        () =>
          respond(vision, {
            input: userMessage({ type: 'input_file', file_data: 'aGk=', file_url: `${files.origin}/x` }),
          }),
        'input[0].content[0] needs exactly one of file_id, file_data and file_url',
      ],
      [
        'a file URL that is not http(s)',
        () => respond(vision, { input: userMessage({ type: 'input_file', file_url: 'file:///etc/passwd' }) }),
        'input[0].content[0].file_url must be an http(s) URL',
      ],
    ])('%s', async (_what, send, message) => {
      const reply = await send();
      expect(reply.status).toBe(400);
      expect(reply.body.error).toEqual({ type: 'invalid_request_error', code: expect.any(String), message });
    });
  });
});
