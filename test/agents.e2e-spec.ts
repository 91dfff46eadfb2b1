import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import OpenAIv7 from 'openai-v7';
import { AssistantsService } from '../src/assistants/assistants.service.js';
import { SpecialistsService } from '../src/specialists/specialists.service.js';
import { ToolsService } from '../src/tools/tools.service.js';
import { FakeUpstream } from './support/fake-upstream.js';
import { call } from './support/http.js';
import { postStream } from './support/sse.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

/** A local SearXNG speaking its JSON API, and a REST API that records what it received. */
async function startServers() {
  const searches: string[] = [];
  const restCalls: { path: string; authorization?: string }[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/search') {
      searches.push(url.searchParams.get('q') ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          results: [
            { title: 'Switchboard docs', url: 'https://example.com/docs', content: 'How it works' },
            { title: 'Release notes', url: 'https://example.com/notes', content: 'What changed' },
          ],
        }),
      );
      return;
    }
    restCalls.push({ path: url.pathname, authorization: req.headers.authorization });
    if (req.headers.authorization === 'Bearer expired') {
      res.writeHead(401).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ open_tickets: 2 }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, base: `http://127.0.0.1:${port}`, searches, restCalls };
}

describe('turns with specialists, handovers and server-side tools', () => {
  let app: TestApp;
  let upstream: FakeUpstream;
  let org: SeededOrganization;
  let servers: Awaited<ReturnType<typeof startServers>>;
  let model: string;

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    servers = await startServers();
    app = await startTestApp({
      SSRF_ALLOWLIST: '127.0.0.1',
      UPSTREAM_MAX_RETRIES: '0',
      HANDOVER_MAX_PER_TURN: '2',
    });
    org = await app.seedOrganization('agents', {
      provider: 'openai-compatible',
      baseUrl: upstream.url,
      model: 'generic-model',
      functionCalling: true,
    });
    model = `asst_${org.assistantId}`;
    const tools = app.running.app.get(ToolsService);
    await tools.upsertTool(org.id, {
      name: 'web_search',
      kind: 'web_search',
      description: 'Search the web',
      config: { provider: 'searxng', baseUrl: servers.base, maxResults: 5 },
    });
    await tools.upsertPlugin(org.id, {
      name: 'helpdesk',
      oauth: {
        providerId: 'helpdesk-idp',
        requiredScopes: ['tickets:read'],
        authUrl: 'https://idp.example.com/authorize',
      },
    });
    await tools.upsertTool(org.id, {
      name: 'open_tickets',
      kind: 'rest',
      description: 'Count the user’s open tickets',
      plugin: 'helpdesk',
      config: {
        method: 'GET',
        urlTemplate: `${servers.base}/tickets`,
        auth: { type: 'user_oauth', providerId: 'helpdesk-idp' },
        parameters: { type: 'object', properties: {} },
      },
    });
    await app.running.app.get(AssistantsService).update(org.id, org.assistantId, { tools: ['web_search'] });
    await app.running.app.get(SpecialistsService).upsert(org.id, org.assistantId, {
      name: 'billing',
      role: 'Questions about invoices and payments',
      instructions: 'You are the billing specialist.',
      model: {
        provider: 'openai-compatible',
        baseUrl: upstream.url,
        model: 'billing-model',
        functionCalling: true,
      },
      tools: ['open_tickets'],
    });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.stop();
    servers?.server.close();
  });

  it('hands over to a specialist in the same turn, emits the handover item, and remembers it', async () => {
    upstream.script(
      {
        toolCalls: [
          { id: 'call_h1', name: 'transfer_to_billing', arguments: '{"reason":"invoice question"}' },
        ],
      },
      { text: 'Billing here: your invoice is paid.' },
    );
    const stream = await postStream(
      app.baseUrl,
      org.keys.assistant,
      { model, input: 'Is my invoice paid?' },
      { 'x-user-id': 'u1' },
    );
    const added = stream.events
      .filter((e) => e.event === 'response.output_item.added')
      .map((e) => e.json.item);
    expect(added[0]).toEqual({
      type: 'handover',
      id: expect.stringMatching(/^hov_/),
      from_specialist: 'generic',
      to_specialist: 'billing',
      reason: 'invoice question',
    });
    const completed = stream.events.find((e) => e.event === 'response.completed')!.json.response;
    expect(completed.output.map((item: { type: string }) => item.type)).toEqual(['handover', 'message']);
    expect(completed.output_text).toBe('Billing here: your invoice is paid.');

    // The first call offered the handover tool to the generic model; the second went to billing.
    const [generic, billing] = upstream.requests.slice(-2).map((r) => r.body);
    expect(generic.model).toBe('generic-model');
    expect(generic.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(
      expect.arrayContaining(['transfer_to_billing', 'web_search', 'save_to_memory']),
    );
    expect(billing.model).toBe('billing-model');
    expect(billing.messages[0]).toEqual({ role: 'system', content: 'You are the billing specialist.' });
    const billingTools = billing.tools.map((t: { function: { name: string } }) => t.function.name);
    expect(billingTools).toContain('transfer_to_generic');
    expect(billingTools).toContain('open_tickets');
    expect(billingTools).not.toContain('save_to_memory');

    // The next turn on this branch starts with the specialist.
    upstream.script({ text: 'Still billing.' });
    const next = await call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.assistant,
      headers: { 'x-user-id': 'u1' },
      body: { model, input: 'And the next one?', previous_response_id: completed.id },
    });
    expect(next.body.output_text).toBe('Still billing.');
    expect(upstream.last.body.model).toBe('billing-model');
  });

  it('answers a handover to an unknown specialist with a tool error, not a crash', async () => {
    upstream.script(
      { toolCalls: [{ id: 'call_ghost', name: 'transfer_to_ghost', arguments: '{"reason":"?"}' }] },
      { text: 'Let me answer myself.' },
    );
    const reply = await call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.assistant,
      body: { model, input: 'hm' },
    });
    expect(reply.status).toBe(200);
    expect(reply.body.output_text).toBe('Let me answer myself.');
    const toolMessage = upstream.last.body.messages.find((m: { role: string }) => m.role === 'tool');
    expect(JSON.parse(toolMessage.content).error).toContain('ghost');
  });

  it('runs a web search server-side, with status and web_search_call events, and feeds results back', async () => {
    upstream.script(
      { toolCalls: [{ id: 'call_ws', name: 'web_search', arguments: '{"query":"switchboard release"}' }] },
      { text: 'Found the release notes.' },
    );
    const stream = await postStream(app.baseUrl, org.keys.assistant, { model, input: 'What is new?' });
    const types = stream.events.map((e) => e.event ?? e.data);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.status',
      'response.output_item.added',
      'response.web_search_call.in_progress',
      'response.web_search_call.searching',
      'response.web_search_call.completed',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.output_item.done',
      'response.completed',
      '[DONE]',
    ]);
    const byType = (type: string) => stream.events.find((e) => e.event === type)!.json;
    expect(byType('response.status')).toMatchObject({
      code: 'tool_calling',
      metadata: { tools: ['web_search'] },
    });
    expect(byType('response.web_search_call.searching')).toMatchObject({
      call_id: 'call_ws',
      query: 'switchboard release',
      output_index: 0,
    });
    expect(byType('response.web_search_call.completed')).toMatchObject({
      call_id: 'call_ws',
      results_count: 2,
    });
    expect(servers.searches).toContain('switchboard release');
    const toolMessage = upstream.last.body.messages.find((m: { role: string }) => m.role === 'tool');
    expect(toolMessage.content).toContain('https://example.com/notes');
    expect(toolMessage.content).toContain('Release notes');
  });

  it('leaves response.status out for the official SDK, whose stream helper accepts handovers and searches', async () => {
    for (const OpenAIClient of [OpenAI, OpenAIv7] as any[]) {
      upstream.script(
        { toolCalls: [{ id: 'call_ws2', name: 'web_search', arguments: '{"query":"sdk"}' }] },
        { toolCalls: [{ id: 'call_h2', name: 'transfer_to_billing', arguments: '{"reason":"money"}' }] },
        { text: 'Done.' },
      );
      const client = new OpenAIClient({
        apiKey: org.keys.assistant,
        baseURL: `${app.baseUrl}/v1`,
        maxRetries: 0,
      });
      const final = await client.responses.stream({ model, input: 'search then bill' }).finalResponse();
      expect(final.output.map((item: { type: string }) => item.type)).toEqual([
        'web_search_call',
        'handover',
        'message',
      ]);
      expect(final.output_text).toBe('Done.');
    }
  });

  it('reports oauth_required when a plugin needs a token the request lacks, or the provider refuses it', async () => {
    const specialistTurn = async (headers: Record<string, string>) => {
      upstream.script(
        { toolCalls: [{ id: 'call_b', name: 'transfer_to_billing', arguments: '{"reason":"tickets"}' }] },
        { toolCalls: [{ id: 'call_t', name: 'open_tickets', arguments: '{}' }] },
        { text: 'Please sign in to the helpdesk.' },
      );
      return postStream(app.baseUrl, org.keys.assistant, { model, input: 'my tickets?' }, headers);
    };
    for (const headers of [{}, { 'x-user-tokens': JSON.stringify({ 'helpdesk-idp': 'expired' }) }] as Record<
      string,
      string
    >[]) {
      const stream = await specialistTurn(headers);
      const completed = stream.events.find((e) => e.event === 'response.completed')!.json.response;
      expect(completed.status).toBe('completed');
      const item = completed.output.find((entry: { type: string }) => entry.type === 'oauth_required');
      expect(item).toEqual({
        type: 'oauth_required',
        id: expect.stringMatching(/^oar_/),
        plugin_id: expect.any(String),
        plugin_name: 'helpdesk',
        provider_id: 'helpdesk-idp',
        required_scopes: ['tickets:read'],
        auth_url: 'https://idp.example.com/authorize',
      });
      expect(completed.output_text).toBe('Please sign in to the helpdesk.');
    }
    // With a good token the REST tool is called with it.
    upstream.script(
      { toolCalls: [{ id: 'call_b2', name: 'transfer_to_billing', arguments: '{"reason":"tickets"}' }] },
      { toolCalls: [{ id: 'call_t2', name: 'open_tickets', arguments: '{}' }] },
      { text: 'You have 2 open tickets.' },
    );
    const ok = await call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.assistant,
      headers: { 'x-user-tokens': JSON.stringify({ 'helpdesk-idp': 'good-token' }) },
      body: { model, input: 'my tickets?' },
    });
    expect(ok.body.output_text).toBe('You have 2 open tickets.');
    expect(servers.restCalls.at(-1)).toEqual({ path: '/tickets', authorization: 'Bearer good-token' });
    expect(ok.body.output.some((item: { type: string }) => item.type === 'oauth_required')).toBe(false);
  });

  it('bounds handovers within a turn', async () => {
    upstream.script(
      { toolCalls: [{ id: 'c1', name: 'transfer_to_billing', arguments: '{"reason":"1"}' }] },
      { toolCalls: [{ id: 'c2', name: 'transfer_to_generic', arguments: '{"reason":"2"}' }] },
      { toolCalls: [{ id: 'c3', name: 'transfer_to_billing', arguments: '{"reason":"3"}' }] },
      { text: 'settled' },
    );
    const reply = await call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.assistant,
      body: { model, input: 'ping-pong' },
    });
    expect(reply.status).toBe(200);
    expect(reply.body.output.filter((item: { type: string }) => item.type === 'handover')).toHaveLength(2);
    expect(reply.body.output_text).toBe('settled');
  });
});
