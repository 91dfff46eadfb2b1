import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AssistantsService } from '../src/assistants/assistants.service.js';
import { MemoryService } from '../src/memory/memory.service.js';
import { USER_CONTEXT_CLOSE, USER_CONTEXT_OPEN } from '../src/memory/user-context.prompt.js';
import { SpecialistsService } from '../src/specialists/specialists.service.js';
import { FakeUpstream, type RecordedRequest } from './support/fake-upstream.js';
import { call } from './support/http.js';
import { postStream } from './support/sse.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

interface ChatMessage {
  role: string;
  content: string | null;
  tool_call_id?: string;
}

/** Small enough to test the cut, large enough for every other note in this file. */
const MEMORY_BUDGET = 120;

const toolNames = (request: RecordedRequest): string[] =>
  ((request.body.tools ?? []) as { function: { name: string } }[]).map((tool) => tool.function.name);

const systemTexts = (request: RecordedRequest): string[] =>
  (request.body.messages as ChatMessage[]).filter((m) => m.role === 'system').map((m) => m.content ?? '');

/** The delimited user-context block the upstream received, or undefined. */
const contextBlock = (request: RecordedRequest): string | undefined =>
  systemTexts(request).find((text) => text.includes(USER_CONTEXT_OPEN));

/** The JSON lines of one section (`claims` or `memory`) of the block. */
function section(request: RecordedRequest, name: 'claims' | 'memory'): unknown[] {
  const block = contextBlock(request);
  if (!block) return [];
  const lines = block.split('\n');
  const start = lines.indexOf(`<${name}>`);
  if (start === -1) return [];
  const end = lines.indexOf(`</${name}>`, start);
  return lines.slice(start + 1, end).map((line) => JSON.parse(line) as unknown);
}

const notes = (request: RecordedRequest) =>
  section(request, 'memory').map((line) => (line as { note: string }).note);

/**
 * A pass-through to the fake upstream that runs `beforeNextReply` once, while the model is being
 * called: a deterministic way to change something in the middle of a turn.
 */
async function startGate(upstream: FakeUpstream) {
  let beforeNextReply: (() => Promise<void>) | undefined;
  const read = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await read(req);
      const hook = beforeNextReply;
      beforeNextReply = undefined;
      await hook?.();
      const reply = await fetch(`${upstream.url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      res.writeHead(reply.status, { 'content-type': reply.headers.get('content-type') ?? 'text/plain' });
      res.end(Buffer.from(await reply.arrayBuffer()));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    server,
    onNextReply(hook: () => Promise<void>) {
      beforeNextReply = hook;
    },
  };
}

describe('per-user context in turns', () => {
  let app: TestApp;
  let upstream: FakeUpstream;
  let gate: Awaited<ReturnType<typeof startGate>>;
  let orgA: SeededOrganization;
  let orgB: SeededOrganization;
  /** Organization A's assistant with a `billing` specialist. */
  let withSpecialistId: string;
  /** Organization A's assistant whose model is reached through the gate. */
  let gatedId: string;
  let memory: MemoryService;

  const modelSettings = (model: string, baseUrl?: string) => ({
    provider: 'openai-compatible',
    baseUrl: baseUrl ?? upstream.url,
    model,
    functionCalling: true,
  });

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    gate = await startGate(upstream);
    app = await startTestApp({
      UPSTREAM_MAX_RETRIES: '0',
      MEMORY_CONTEXT_BUDGET_CHARS: String(MEMORY_BUDGET),
    });
    memory = app.running.app.get(MemoryService);
    orgA = await app.seedOrganization('context-a', modelSettings('generic-model'));
    orgB = await app.seedOrganization('context-b', modelSettings('generic-model'));
    const assistants = app.running.app.get(AssistantsService);
    withSpecialistId = (
      await assistants.create(orgA.id, {
        name: 'front desk',
        instructions: 'You are the front desk.',
        model: modelSettings('front-model'),
      })
    ).id;
    await app.running.app.get(SpecialistsService).upsert(orgA.id, withSpecialistId, {
      name: 'billing',
      role: 'Invoices and payments',
      instructions: 'You are the billing specialist.',
      model: modelSettings('billing-model'),
    });
    gatedId = (
      await assistants.create(orgA.id, {
        name: 'gated',
        instructions: 'You are gated.',
        model: modelSettings('gated-model', gate.url),
      })
    ).id;
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.stop();
    gate?.server.close();
  });

  const respond = async (
    input: string,
    userId: string | undefined,
    options: { org?: SeededOrganization; model?: string; previous?: string; instructions?: string } = {},
  ) => {
    const org = options.org ?? orgA;
    const reply = await call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.assistant,
      headers: userId === undefined ? {} : { 'x-user-id': userId },
      body: {
        model: options.model ?? org.assistantId,
        input,
        previous_response_id: options.previous,
        instructions: options.instructions,
      },
    });
    expect(reply.status).toBe(200);
    return reply.body;
  };

  const writeClaims = async (org: SeededOrganization, claims: object[]) => {
    const reply = await call(app.baseUrl, 'POST', '/v1/user-claims/bulk', {
      key: org.keys.user,
      body: { claims },
    });
    expect(reply.status).toBe(200);
  };

  const memoryRows = (
    organizationId: string,
    userId: string,
  ): Promise<{ assistant_id: string; content: string }[]> =>
    app.dataSource.query(
      `SELECT assistant_id, content FROM memory_items WHERE organization_id = $1 AND user_id = $2
        ORDER BY created_at, id`,
      [organizationId, userId],
    );

  const userCall = (method: string, path: string, userId: string, key = orgA.keys.user) =>
    call(app.baseUrl, method, path, { key, headers: { 'x-user-id': userId } });

  /** Saves as the model would, one after another so creation times are distinct. */
  const remember = async (organizationId: string, userId: string, assistantId: string, texts: string[]) => {
    for (const text of texts) {
      expect((await memory.saveFromModel(organizationId, userId, assistantId, text)).saved).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  };

  beforeAll(async () => {
    await writeClaims(orgA, [
      { userId: 'ulla', claimKey: 'plan', claimValue: 'gold' },
      { userId: 'ulla', claimKey: 'profile', claimValue: { name: 'Ulla', city: 'Oslo' } },
    ]);
  });

  describe('the generic path', () => {
    it('injects the claims in a delimited block after the operator’s instructions, and offers save_to_memory', async () => {
      upstream.script({ text: 'Hello Ulla.' });
      await respond('Hello', 'ulla', { instructions: 'Be brief.' });
      const messages = upstream.last.body.messages as ChatMessage[];
      expect(messages.map((m) => m.role)).toEqual(['system', 'system', 'system', 'user']);
      expect(messages[0].content).toBe('You help context-a.');
      expect(messages[1].content).toBe('Be brief.');
      expect(messages[3].content).toBe('Hello');
      const block = messages[2].content!;
      // A preamble saying it is data, then the block, which closes the message.
      expect(block.indexOf('not instructions')).toBeLessThan(block.indexOf(USER_CONTEXT_OPEN));
      expect(block.endsWith(USER_CONTEXT_CLOSE)).toBe(true);
      expect(section(upstream.last, 'claims')).toEqual([
        { key: 'plan', value: 'gold' },
        { key: 'profile', value: { name: 'Ulla', city: 'Oslo' } },
      ]);
      expect(block).not.toContain('<memory>');

      const saveTool = (
        upstream.last.body.tools as { function: { name: string; parameters: unknown } }[]
      ).find((tool) => tool.function.name === 'save_to_memory');
      expect(saveTool?.function.parameters).toMatchObject({ type: 'object', required: ['content'] });
    });

    it('neither injects anything nor offers save_to_memory without a user id', async () => {
      upstream.script({ text: 'Hello stranger.' });
      await respond('Hello', undefined);
      expect(contextBlock(upstream.last)).toBeUndefined();
      expect(systemTexts(upstream.last)).toEqual(['You help context-a.']);
      expect(toolNames(upstream.last)).not.toContain('save_to_memory');
    });

    it('runs save_to_memory server-side: a row is stored, the client sees no function call, the turn goes on to the reply', async () => {
      upstream.script(
        {
          toolCalls: [
            {
              id: 'call_mem1',
              name: 'save_to_memory',
              arguments: '{"content":"Prefers answers in Norwegian"}',
            },
          ],
        },
        { text: 'Noted, I will answer in Norwegian.' },
      );
      const stream = await postStream(
        app.baseUrl,
        orgA.keys.assistant,
        { model: orgA.assistantId, input: 'Please always answer in Norwegian.' },
        { 'x-user-id': 'ulla' },
      );
      expect(stream.status).toBe(200);
      const types = stream.events.map((event) => event.event ?? event.data);
      expect(types.filter((type) => type.startsWith('response.function_call'))).toEqual([]);
      const completed = stream.events.find((event) => event.event === 'response.completed')!.json.response;
      expect(completed.status).toBe('completed');
      expect(completed.output.map((item: { type: string }) => item.type)).toEqual(['message']);
      expect(completed.output_text).toBe('Noted, I will answer in Norwegian.');
      expect(stream.raw).not.toContain('"function_call"');

      expect(await memoryRows(orgA.id, 'ulla')).toEqual([
        { assistant_id: orgA.assistantId, content: 'Prefers answers in Norwegian' },
      ]);
      // The model was told the note was saved, and the turn called it again to finish.
      const toolReply = (upstream.last.body.messages as ChatMessage[]).find((m) => m.role === 'tool');
      expect(toolReply).toEqual({ role: 'tool', tool_call_id: 'call_mem1', content: '{"saved":true}' });

      // A later read of the response and the chat history show no trace of the tool call.
      const read = await call(app.baseUrl, 'GET', `/v1/responses/${completed.id}`, {
        key: orgA.keys.user,
        headers: { 'x-user-id': 'ulla' },
      });
      expect(read.body.output).toEqual(completed.output);
      const history = await userCall(
        'GET',
        `/v1/chat/history/conversations/${completed.conversation.id}/messages`,
        'ulla',
      );
      expect(history.body.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
        ['user', 'Please always answer in Norwegian.'],
        ['assistant', 'Noted, I will answer in Norwegian.'],
      ]);
    });

    it('uses what was saved in one conversation in the next one', async () => {
      upstream.script({ text: 'Hei!' });
      await respond('A new conversation', 'ulla');
      expect(notes(upstream.last)).toEqual(['Prefers answers in Norwegian']);
      expect(section(upstream.last, 'claims')).toHaveLength(2);
      // The user sees it too.
      const listed = await userCall('GET', '/v1/memory', 'ulla');
      expect(listed.body.data.map((item: { content: string }) => item.content)).toEqual([
        'Prefers answers in Norwegian',
      ]);
    });

    it('injects memory newest first, cut at MEMORY_CONTEXT_BUDGET_CHARS', async () => {
      // Four notes of 50 characters: only the newest two fit in 120.
      const texts = ['1', '2', '3', '4'].map((n) => `Note ${n} `.padEnd(50, 'x'));
      await remember(orgA.id, 'bea', orgA.assistantId, texts);
      upstream.script({ text: 'ok' });
      await respond('What do you remember?', 'bea');
      expect(notes(upstream.last)).toEqual([texts[3], texts[2]]);
      // Nothing is lost: the budget bounds what is injected, not what is kept.
      expect(await memoryRows(orgA.id, 'bea')).toHaveLength(4);
    });
  });

  describe('specialists', () => {
    it('get the claims and memory of the user but are never offered save_to_memory', async () => {
      await remember(orgA.id, 'ulla', withSpecialistId, ['Pays by invoice']);
      upstream.script(
        { toolCalls: [{ id: 'call_h', name: 'transfer_to_billing', arguments: '{"reason":"invoice"}' }] },
        { text: 'Billing here.' },
      );
      const first = await respond('About my invoice', 'ulla', { model: withSpecialistId });
      const [generic, billing] = upstream.requests.slice(-2);
      expect(generic.body.model).toBe('front-model');
      expect(toolNames(generic)).toEqual(expect.arrayContaining(['transfer_to_billing', 'save_to_memory']));
      expect(billing.body.model).toBe('billing-model');
      expect(systemTexts(billing)[0]).toBe('You are the billing specialist.');
      expect(systemTexts(billing)[1]).toBe(contextBlock(billing));
      expect(section(billing, 'claims')).toEqual([
        { key: 'plan', value: 'gold' },
        { key: 'profile', value: { name: 'Ulla', city: 'Oslo' } },
      ]);
      // Memory is this assistant's, not the other assistant's of the same user.
      expect(notes(billing)).toEqual(['Pays by invoice']);
      expect(toolNames(billing)).not.toContain('save_to_memory');

      // The next turn starts with the specialist; a save_to_memory call it makes anyway is refused.
      upstream.script(
        { toolCalls: [{ id: 'call_sneak', name: 'save_to_memory', arguments: '{"content":"Sneaky note"}' }] },
        { text: 'Still billing.' },
      );
      const next = await respond('Another one', 'ulla', { model: withSpecialistId, previous: first.id });
      expect(next.output_text).toBe('Still billing.');
      expect(upstream.requests.at(-2)!.body.model).toBe('billing-model');
      expect(toolNames(upstream.requests.at(-2)!)).not.toContain('save_to_memory');
      const refusal = (upstream.last.body.messages as ChatMessage[]).find(
        (m) => m.tool_call_id === 'call_sneak',
      );
      expect(refusal?.content).toContain('Unknown tool');
      expect((await memoryRows(orgA.id, 'ulla')).map((row) => row.content)).not.toContain('Sneaky note');
    });
  });

  describe('opt-out', () => {
    it('stops loading and saving for every assistant, keeps the claims, and is undone by opting back in', async () => {
      await writeClaims(orgA, [{ userId: 'olaf', claimKey: 'plan', claimValue: 'basic' }]);
      await remember(orgA.id, 'olaf', orgA.assistantId, ['Likes skiing']);
      expect((await userCall('POST', '/v1/memory/opt-out', 'olaf')).status).toBe(200);

      upstream.script(
        {
          toolCalls: [{ id: 'call_opt', name: 'save_to_memory', arguments: '{"content":"Should not stay"}' }],
        },
        { text: 'ok' },
      );
      await respond('Remember that I like skiing', 'olaf');
      const first = upstream.requests.at(-2)!;
      expect(section(first, 'claims')).toEqual([{ key: 'plan', value: 'basic' }]);
      expect(notes(first)).toEqual([]);
      expect(toolNames(first)).not.toContain('save_to_memory');
      expect((await memoryRows(orgA.id, 'olaf')).map((row) => row.content)).toEqual(['Likes skiing']);

      expect((await userCall('DELETE', '/v1/memory/opt-out', 'olaf')).body.optedOut).toBe(false);
      upstream.script({ text: 'ok' });
      await respond('Hello again', 'olaf');
      expect(notes(upstream.last)).toEqual(['Likes skiing']);
      expect(toolNames(upstream.last)).toContain('save_to_memory');
    });

    it('applies an opt-out of one assistant to that assistant only', async () => {
      await remember(orgA.id, 'petra', orgA.assistantId, ['Main assistant note']);
      await remember(orgA.id, 'petra', withSpecialistId, ['Front desk note']);
      const optOut = await userCall(
        'POST',
        `/v1/memory/opt-out?assistant_id=asst_${orgA.assistantId}`,
        'petra',
      );
      expect(optOut.body).toEqual({ optedOut: true, assistantId: `asst_${orgA.assistantId}` });

      upstream.script({ text: 'ok' });
      await respond('Hi', 'petra');
      expect(notes(upstream.last)).toEqual([]);
      expect(toolNames(upstream.last)).not.toContain('save_to_memory');

      upstream.script({ text: 'ok' });
      await respond('Hi', 'petra', { model: withSpecialistId });
      expect(notes(upstream.last)).toEqual(['Front desk note']);
      expect(toolNames(upstream.last)).toContain('save_to_memory');
    });

    it('refuses a save that an opt-out committed during the turn overtook', async () => {
      // Offered when the turn started; the user opts out while the model is thinking.
      gate.onNextReply(async () => {
        expect((await userCall('POST', '/v1/memory/opt-out', 'quinn')).status).toBe(200);
      });
      upstream.script(
        { toolCalls: [{ id: 'call_late', name: 'save_to_memory', arguments: '{"content":"Too late"}' }] },
        { text: 'Understood.' },
      );
      const reply = await respond('Remember this', 'quinn', { model: gatedId });
      expect(reply.output_text).toBe('Understood.');
      expect(toolNames(upstream.requests.at(-2)!)).toContain('save_to_memory');
      expect(await memoryRows(orgA.id, 'quinn')).toEqual([]);
      const refusal = (upstream.last.body.messages as ChatMessage[]).find(
        (m) => m.tool_call_id === 'call_late',
      );
      expect(JSON.parse(refusal!.content!).error).toContain('turned memory off');
    });
  });

  describe('tenant boundaries', () => {
    it('another organization with the same user id sees nothing of it and changes nothing', async () => {
      const before = await memoryRows(orgA.id, 'ulla');
      // Reads through organization B's key come back empty.
      expect((await userCall('GET', '/v1/memory', 'ulla', orgB.keys.user)).body.data).toEqual([]);
      expect((await call(app.baseUrl, 'GET', '/user-claims/ulla', { key: orgB.keys.user })).body).toEqual([]);
      expect((await userCall('GET', '/v1/chat/history/conversations', 'ulla', orgB.keys.user)).body).toEqual(
        [],
      );
      // Deleting and opting out in B touch nothing of A.
      expect((await userCall('DELETE', '/v1/memory', 'ulla', orgB.keys.user)).body).toEqual({ deleted: 0 });
      expect((await userCall('POST', '/v1/memory/opt-out', 'ulla', orgB.keys.user)).status).toBe(200);

      // A turn in B for "ulla" carries none of A's data.
      upstream.script({ text: 'Hello from B.' });
      await respond('Hello', 'ulla', { org: orgB });
      expect(contextBlock(upstream.last)).toBeUndefined();
      const seen = JSON.stringify(upstream.last.body);
      for (const secret of ['Norwegian', 'gold', 'Oslo', 'invoice']) expect(seen).not.toContain(secret);

      // A is as it was: same memory, still loaded, save_to_memory still offered.
      expect(await memoryRows(orgA.id, 'ulla')).toEqual(before);
      upstream.script({ text: 'Hei.' });
      await respond('Hello', 'ulla');
      expect(notes(upstream.last)).toEqual(['Prefers answers in Norwegian']);
      expect(toolNames(upstream.last)).toContain('save_to_memory');
    });

    it('a note saved in another organization for the same user id stays there', async () => {
      await call(app.baseUrl, 'DELETE', '/v1/memory/opt-out', {
        key: orgB.keys.user,
        headers: { 'x-user-id': 'ulla' },
      });
      upstream.script(
        { toolCalls: [{ id: 'call_b', name: 'save_to_memory', arguments: '{"content":"Lives in Bergen"}' }] },
        { text: 'Saved in B.' },
      );
      await respond('I live in Bergen', 'ulla', { org: orgB });
      expect(await memoryRows(orgB.id, 'ulla')).toEqual([
        { assistant_id: orgB.assistantId, content: 'Lives in Bergen' },
      ]);
      upstream.script({ text: 'Hei.' });
      await respond('Where do I live?', 'ulla');
      expect(notes(upstream.last)).toEqual(['Prefers answers in Norwegian']);
    });

    it('another user id of the same organization sees nothing of it', async () => {
      upstream.script({ text: 'Hello Ulrik.' });
      await respond('Hello', 'ulrik');
      expect(contextBlock(upstream.last)).toBeUndefined();
      expect(toolNames(upstream.last)).toContain('save_to_memory');
      expect((await userCall('GET', '/v1/memory', 'ulrik')).body.data).toEqual([]);
      const ullasItem = (await userCall('GET', '/v1/memory', 'ulla')).body.data[0].id as string;
      const stolen = await userCall('DELETE', `/v1/memory/${ullasItem}`, 'ulrik');
      expect(stolen.status).toBe(404);
      expect(stolen.body.error.code).toBe('memory_item_not_found');
      expect((await memoryRows(orgA.id, 'ulla')).map((row) => row.content)).toContain(
        'Prefers answers in Norwegian',
      );
    });
  });
});
