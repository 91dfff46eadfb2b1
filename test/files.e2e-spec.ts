import OpenAI, { toFile } from 'openai';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';
import { sdkClient } from './support/sdk-client.js';

interface FileRow {
  id: string;
  organization_id: string;
  user_id: string | null;
  purpose: string;
  filename: string;
  bytes: string;
  content: Buffer;
  text_status: string;
  extracted_text: string | null;
}

/** Small limits, so "too big" and "over the organization's quota" need only a few kilobytes. */
const MAX_BYTES = 4 * 1024;
const ORG_MAX_BYTES = 16 * 1024;

describe('Files API', () => {
  let app: TestApp;
  let orgA: SeededOrganization;
  let orgB: SeededOrganization;
  /** Organization A, no end user. */
  let client: OpenAI;
  const sdk = (key: string, userId?: string) => sdkClient(app.baseUrl, key, userId);

  beforeAll(async () => {
    app = await startTestApp({ FILES_MAX_BYTES: '4kb', FILES_ORG_MAX_BYTES: '16kb' });
    orgA = await app.seedOrganization('files-a');
    orgB = await app.seedOrganization('files-b');
    client = sdk(orgA.keys.user);
  });
  afterAll(async () => {
    await app?.close();
  });

  const row = async (id: string): Promise<FileRow | undefined> =>
    (
      await app.dataSource.query<FileRow[]>(
        `SELECT id, organization_id, user_id, purpose, filename, bytes, content, text_status, extracted_text
           FROM files WHERE id = $1`,
        [id.replace(/^file-/, '')],
      )
    )[0];

  /** A raw multipart upload, as a client without the SDK would send it. */
  const upload = (
    key: string,
    fields: { purpose?: string; file?: { bytes: Buffer | string; name: string; type?: string } },
    headers: Record<string, string> = {},
  ) => {
    const form = new FormData();
    if (fields.purpose !== undefined) form.append('purpose', fields.purpose);
    if (fields.file !== undefined) {
      form.append(
        'file',
        new Blob([fields.file.bytes], { type: fields.file.type ?? 'text/plain' }),
        fields.file.name,
      );
    }
    return send('POST', '/v1/files', key, headers, form);
  };
  const send = async (
    method: string,
    path: string,
    key: string,
    headers: Record<string, string> = {},
    body?: FormData,
  ): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${app.baseUrl}${path}`, {
      method,
      headers: { 'x-api-key': key, ...headers },
      body,
    });
    const text = await res.text();
    return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
  };

  it("stores an upload with its bytes and text, and gives OpenAI's file object", async () => {
    const text = '# Handbook\n\nThe office opens at 9.\n';
    const file = await client.files.create({
      file: await toFile(Buffer.from(text), 'handbook.md'),
      purpose: 'assistants',
    });
    expect(file).toEqual({
      id: expect.stringMatching(/^file-[0-9a-f-]{36}$/),
      object: 'file',
      bytes: Buffer.byteLength(text),
      created_at: expect.any(Number),
      filename: 'handbook.md',
      purpose: 'assistants',
      status: 'processed',
    });
    expect(Math.abs(file.created_at - Date.now() / 1000)).toBeLessThan(600);
    const stored = await row(file.id);
    expect(stored).toMatchObject({
      organization_id: orgA.id,
      user_id: null,
      purpose: 'assistants',
      filename: 'handbook.md',
      bytes: String(Buffer.byteLength(text)),
      text_status: 'extracted',
      extracted_text: text,
    });
    expect(stored!.content.equals(Buffer.from(text))).toBe(true);

    expect(await client.files.retrieve(file.id)).toEqual(file);
    const content = await client.files.content(file.id);
    expect(content.headers.get('content-type')).toBe('application/octet-stream');
    expect(content.headers.get('x-content-type-options')).toBe('nosniff');
    expect(content.headers.get('content-disposition')).toBe("attachment; filename*=UTF-8''handbook.md");
    expect(await content.text()).toBe(text);
  });

  it('keeps the visible text of HTML and marks binary formats as not extracted', async () => {
    const html =
      '<!doctype html><html><head><title>T</title><style>p{color:red}</style></head><body>' +
      '<script>var a = "<p>hidden</p>";</script><h1>Refunds</h1><p title="a > b">Within 30&nbsp;days &amp; with a receipt.</p>' +
      '<!-- a comment --></body></html>';
    const page = await client.files.create({
      file: await toFile(Buffer.from(html), 'policy.html', { type: 'text/html' }),
      purpose: 'assistants',
    });
    expect((await row(page.id))!.extracted_text).toBe('Refunds\n\nWithin 30 days & with a receipt.');

    const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from([0xff, 0x00, 0xfe, 0x01])]);
    const binary = await client.files.create({
      file: await toFile(pdf, 'scan.pdf', { type: 'application/pdf' }),
      purpose: 'assistants',
    });
    expect(await row(binary.id)).toMatchObject({ text_status: 'unavailable', extracted_text: null });
    expect(Buffer.from(await (await client.files.content(binary.id)).arrayBuffer()).equals(pdf)).toBe(true);
  });

  it('keeps a UTF-8 file name, and names it safely in the download', async () => {
    const name = "résumé (1)'s.txt";
    const file = await client.files.create({
      file: await toFile(Buffer.from('cv'), name),
      purpose: 'assistants',
    });
    expect(file.filename).toBe(name);
    expect((await row(file.id))!.filename).toBe(name);
    const content = await client.files.content(file.id);
    expect(content.headers.get('content-disposition')).toBe(
      "attachment; filename*=UTF-8''r%C3%A9sum%C3%A9%20%281%29%27s.txt",
    );
  });

  it('lists with cursor paging, order and the purpose filter', async () => {
    const other = sdk(orgB.keys.user);
    const ids: string[] = [];
    for (const [index, purpose] of (['batch', 'assistants', 'batch', 'evals', 'batch'] as const).entries()) {
      ids.push(
        (await other.files.create({ file: await toFile(Buffer.from(`n${index}`), `n${index}.txt`), purpose }))
          .id,
      );
    }
    const firstPage = await other.files.list({ limit: 2 });
    expect(firstPage.data.map((file) => file.id)).toEqual([ids[4], ids[3]]);
    expect(firstPage.has_more).toBe(true);
    expect((firstPage as any).body).toMatchObject({
      object: 'list',
      first_id: ids[4],
      last_id: ids[3],
      has_more: true,
    });

    const all: string[] = [];
    for await (const file of other.files.list({ limit: 2 })) all.push(file.id);
    expect(all).toEqual([...ids].reverse());

    const ascending: string[] = [];
    for await (const file of other.files.list({ limit: 2, order: 'asc', purpose: 'batch' }))
      ascending.push(file.id);
    expect(ascending).toEqual([ids[0], ids[2], ids[4]]);

    const last = await other.files.list({ limit: 10, after: ids[1] });
    expect(last.data.map((file) => file.id)).toEqual([ids[0]]);
    expect((last as any).body.has_more).toBe(false);
  });

  it("deletes a file: OpenAI's answer, the row gone, then 404", async () => {
    const file = await client.files.create({
      file: await toFile(Buffer.from('bye'), 'bye.txt'),
      purpose: 'assistants',
    });
    expect(await client.files.delete(file.id)).toEqual({ id: file.id, object: 'file', deleted: true });
    expect(await row(file.id)).toBeUndefined();
    const again = await send('GET', `/v1/files/${file.id}`, orgA.keys.user);
    expect(again).toEqual({
      status: 404,
      body: { error: { type: 'not_found_error', code: 'file_not_found', message: expect.any(String) } },
    });
    expect((await send('DELETE', `/v1/files/${file.id}`, orgA.keys.user)).status).toBe(404);
  });

  it("keeps an organization's files from every other organization", async () => {
    const file = await client.files.create({
      file: await toFile(Buffer.from('secret'), 's.txt'),
      purpose: 'assistants',
    });
    for (const [method, path] of [
      ['GET', `/v1/files/${file.id}`],
      ['GET', `/v1/files/${file.id}/content`],
      ['DELETE', `/v1/files/${file.id}`],
    ]) {
      const reply = await send(method, path, orgB.keys.full_access);
      expect([method, path, reply.status, reply.body.error.code]).toEqual([
        method,
        path,
        404,
        'file_not_found',
      ]);
    }
    const listed = await send('GET', '/v1/files', orgB.keys.full_access);
    expect(listed.body.data.map((f: { id: string }) => f.id)).not.toContain(file.id);
    expect((await send('GET', `/v1/files?after=${file.id}`, orgB.keys.full_access)).status).toBe(400);
    expect(await row(file.id)).toMatchObject({ organization_id: orgA.id });
  });

  it('keeps a user_data file to the end user who uploaded it', async () => {
    const alice = sdk(orgA.keys.user, 'alice');
    const file = await alice.files.create({
      file: await toFile(Buffer.from('my notes'), 'notes.txt'),
      purpose: 'user_data',
    });
    expect(await row(file.id)).toMatchObject({ user_id: 'alice', purpose: 'user_data' });
    expect(await alice.files.retrieve(file.id)).toEqual(file);
    expect((await alice.files.list()).data.map((f) => f.id)).toContain(file.id);

    for (const headers of [{ 'x-user-id': 'bob' }, {}] as Record<string, string>[]) {
      for (const [method, path] of [
        ['GET', `/v1/files/${file.id}`],
        ['GET', `/v1/files/${file.id}/content`],
        ['DELETE', `/v1/files/${file.id}`],
      ]) {
        expect([method, path, (await send(method, path, orgA.keys.user, headers)).status]).toEqual([
          method,
          path,
          404,
        ]);
      }
      const listed = await send('GET', '/v1/files', orgA.keys.user, headers);
      expect(listed.body.data.map((f: { id: string }) => f.id)).not.toContain(file.id);
    }
    // Bob still sees the organization's files.
    const bob = await send('GET', '/v1/files?purpose=assistants', orgA.keys.user, { 'x-user-id': 'bob' });
    expect(bob.body.data.length).toBeGreaterThan(0);

    const anonymous = await upload(orgA.keys.user, {
      purpose: 'user_data',
      file: { bytes: 'x', name: 'x.txt' },
    });
    expect([anonymous.status, anonymous.body.error.code]).toEqual([400, 'missing_required_field']);
    expect(await row(file.id)).toMatchObject({ user_id: 'alice' });
  });

  it('refuses uploads without a file, with a purpose OpenAI does not have, or too big', async () => {
    const noFile = await upload(orgA.keys.user, { purpose: 'assistants' });
    expect([noFile.status, noFile.body.error.code]).toEqual([400, 'missing_required_field']);

    const noPurpose = await upload(orgA.keys.user, { file: { bytes: 'x', name: 'x.txt' } });
    expect([noPurpose.status, noPurpose.body.error.code]).toEqual([400, 'missing_required_field']);

    const badPurpose = await upload(orgA.keys.user, {
      purpose: 'answers',
      file: { bytes: 'x', name: 'x.txt' },
    });
    expect(badPurpose.status).toBe(400);
    expect(badPurpose.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request' });
    expect(badPurpose.body.error.message).toContain('purpose must be one of assistants, user_data, batch');

    const before = await app.dataSource.query('SELECT count(*)::int AS n FROM files');
    const tooBig = await upload(orgA.keys.user, {
      purpose: 'assistants',
      file: { bytes: Buffer.alloc(MAX_BYTES + 1, 0x61), name: 'big.txt' },
    });
    expect(tooBig).toEqual({
      status: 413,
      body: {
        error: {
          type: 'invalid_request_error',
          code: 'file_too_large',
          message: expect.stringContaining(String(MAX_BYTES)),
        },
      },
    });
    const exactlyMax = await upload(orgA.keys.user, {
      purpose: 'assistants',
      file: { bytes: Buffer.alloc(MAX_BYTES, 0x61), name: 'max.txt' },
    });
    expect(exactlyMax.status).toBe(201);
    expect(await app.dataSource.query('SELECT count(*)::int AS n FROM files')).toEqual([
      { n: before[0].n + 1 },
    ]);
  });

  it("refuses an upload that would take the organization's files past its quota", async () => {
    const org = await app.seedOrganization('files-quota');
    const four = { bytes: Buffer.alloc(MAX_BYTES, 0x62), name: 'four.txt' };
    for (let i = 0; i < ORG_MAX_BYTES / MAX_BYTES; i++) {
      expect((await upload(org.keys.user, { purpose: 'batch', file: four })).status).toBe(201);
    }
    const over = await upload(org.keys.user, { purpose: 'batch', file: { bytes: 'x', name: 'one.txt' } });
    expect([over.status, over.body.error.code]).toEqual([400, 'file_storage_quota_exceeded']);
    const [{ total }] = await app.dataSource.query(
      'SELECT SUM(bytes)::int AS total FROM files WHERE organization_id = $1',
      [org.id],
    );
    expect(total).toBe(ORG_MAX_BYTES);
    // Deleting makes room again.
    const listed = await send('GET', '/v1/files?limit=1', org.keys.user);
    await send('DELETE', `/v1/files/${listed.body.data[0].id}`, org.keys.user);
    expect(
      (await upload(org.keys.user, { purpose: 'batch', file: { bytes: 'x', name: 'one.txt' } })).status,
    ).toBe(201);
  });

  it('lets concurrent uploads together fill the quota, never pass it', async () => {
    const org = await app.seedOrganization('files-race');
    const file = { bytes: Buffer.alloc(MAX_BYTES, 0x63), name: 'race.txt' };
    const replies = await Promise.all(
      Array.from({ length: 6 }, () => upload(org.keys.user, { purpose: 'assistants', file })),
    );
    expect(replies.map((reply) => reply.status).sort()).toEqual([201, 201, 201, 201, 400, 400]);
    const [{ total }] = await app.dataSource.query(
      'SELECT SUM(bytes)::int AS total FROM files WHERE organization_id = $1',
      [org.id],
    );
    expect(total).toBe(ORG_MAX_BYTES);
  });

  it("says what is wrong with a form that is not the Files API's", async () => {
    const wrongField = new FormData();
    wrongField.append('purpose', 'assistants');
    wrongField.append('document', new Blob(['x']), 'x.txt');
    const refused = await send('POST', '/v1/files', orgA.keys.user, {}, wrongField);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'invalid_request' });
    expect(refused.body.error.message).toMatch(/^The multipart body was refused: /);

    const unknownField = new FormData();
    unknownField.append('purpose', 'assistants');
    unknownField.append('expires_after', 'soon');
    unknownField.append('file', new Blob(['x']), 'x.txt');
    const unknown = await send('POST', '/v1/files', orgA.keys.user, {}, unknownField);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain('expires_after');
  });

  it('answers 403 to keys without the user scope, before reading the upload', async () => {
    // Too big as well: the scope is refused first, so the body was never read.
    const form = await upload(orgA.keys.assistant, {
      purpose: 'assistants',
      file: { bytes: Buffer.alloc(MAX_BYTES * 2, 0x61), name: 'x.txt' },
    });
    expect([form.status, form.body.error.code]).toEqual([403, 'insufficient_scope']);
    for (const path of ['/v1/files', '/v1/files/file-00000000-0000-4000-8000-000000000000']) {
      expect((await send('GET', path, orgA.keys.assistant)).status).toBe(403);
    }
    const ok = await send('GET', '/v1/files', orgA.keys.full_access);
    expect(ok.status).toBe(200);
  });

  it('answers 404 to ids that are not file ids', async () => {
    for (const id of ['nope', 'file-123', '00000000-0000-4000-8000-000000000000']) {
      const reply = await send('GET', `/v1/files/${id}`, orgA.keys.user);
      expect([id, reply.status, reply.body.error.code]).toEqual([id, 404, 'file_not_found']);
    }
  });
});
