import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AssistantsService } from '../src/assistants/assistants.service.js';
import { SpecialistsService } from '../src/specialists/specialists.service.js';
import { ToolsService } from '../src/tools/tools.service.js';
import { FakeUpstream } from './support/fake-upstream.js';
import { OtlpReceiver } from './support/otlp-receiver.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

/** OpenTelemetry traces as an operator's collector receives them (OTLP/HTTP, JSON encoding). */

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

describe('tracing', () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
  });
  afterAll(() => upstream.stop());

  const model = () => ({ provider: 'openai-compatible', baseUrl: upstream.url, model: 'traced-model' });

  async function turn(
    app: TestApp,
    org: SeededOrganization,
    headers: Record<string, string> = {},
    previous?: string,
  ) {
    const reply = await fetch(`${app.baseUrl}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': org.keys.assistant, ...headers },
      body: JSON.stringify({
        model: org.assistantId,
        input: 'hello',
        ...(previous ? { previous_response_id: previous } : {}),
      }),
    });
    expect(reply.status).toBe(200);
    return (await reply.json()) as any;
  }

  describe('with an OTLP endpoint', () => {
    let receiver: OtlpReceiver;
    let app: TestApp;
    let org: SeededOrganization;
    beforeAll(async () => {
      receiver = await new OtlpReceiver().start();
      app = await startTestApp({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'switchboard-under-test',
      });
      org = await app.seedOrganization('traced', model());
    });
    afterAll(async () => {
      await app.close();
      await receiver.stop();
    });

    it('continues the caller trace in a server span named by the route, and passes it to the upstream model', async () => {
      const first = await turn(app, org);
      // A continued thread: its upstream request is written around the stored thread's text.
      await turn(app, org, { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` }, first.id);
      expect(upstream.last.body.messages.map((m: { role: string }) => m.role)).toEqual([
        'system',
        'user',
        'assistant',
        'user',
      ]);
      expect(upstream.last.headers['content-type']).toBe('application/json');
      const server = await receiver.waitFor(
        (span) => span.name === 'POST /v1/responses' && span.traceId === TRACE_ID,
      );
      expect(server).toMatchObject({
        traceId: TRACE_ID,
        parentSpanId: CALLER_SPAN,
        kind: 2, // SERVER
        service: 'switchboard-under-test',
        attributes: expect.objectContaining({
          'http.request.method': 'POST',
          'http.route': '/v1/responses',
          'http.response.status_code': 200,
        }),
      });
      const traceparent = String(upstream.last.headers.traceparent);
      expect(traceparent).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`));
    });
  });

  describe('a turn with a tool call and a handover', () => {
    let receiver: OtlpReceiver;
    let app: TestApp;
    let org: SeededOrganization;
    let api: Server;
    const apiHeaders: IncomingHttpHeaders[] = [];

    beforeAll(async () => {
      receiver = await new OtlpReceiver().start();
      api = createServer((req, res) => {
        apiHeaders.push(req.headers);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"open":3}');
      });
      await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
      app = await startTestApp({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        SSRF_ALLOWLIST: '127.0.0.1',
      });
      org = await app.seedOrganization('traced-agents', { ...model(), functionCalling: true });
      const services = app.running.app;
      await services.get(ToolsService).upsertTool(org.id, {
        name: 'open_tickets',
        kind: 'rest',
        description: 'Count open tickets',
        config: {
          method: 'GET',
          urlTemplate: `http://127.0.0.1:${(api.address() as AddressInfo).port}/tickets`,
          parameters: { type: 'object', properties: {} },
          // Trace context goes to a tool's host only when its config opts in.
          traceContext: true,
        },
      });
      await services.get(AssistantsService).update(org.id, org.assistantId, { tools: ['open_tickets'] });
      await services.get(SpecialistsService).upsert(org.id, org.assistantId, {
        name: 'billing',
        role: 'Invoices',
        model: { ...model(), model: 'billing-model', functionCalling: true },
      });
    });
    afterAll(async () => {
      await app.close();
      await receiver.stop();
      api.close();
    });

    it('exports the span tree with GenAI attributes, and carries the trace to the tool API', async () => {
      upstream.script(
        { toolCalls: [{ id: 'call_t1', name: 'open_tickets', arguments: '{}' }] },
        { toolCalls: [{ id: 'call_h1', name: 'transfer_to_billing', arguments: '{"reason":"invoices"}' }] },
        { text: 'Billing: you have 3 open tickets.' },
      );
      const body = await turn(app, org, { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` });
      expect(body.output_text).toBe('Billing: you have 3 open tickets.');
      const server = await receiver.waitFor(
        (span) => span.name === 'POST /v1/responses' && span.traceId === TRACE_ID,
      );
      await receiver.waitFor((span) => span.name === 'save turn' && span.traceId === TRACE_ID);
      const spans = receiver.spans.filter((span) => span.traceId === TRACE_ID);
      const named = (name: string) => spans.filter((span) => span.name === name);
      const children = (parent: { spanId: string }) =>
        spans.filter((span) => span.parentSpanId === parent.spanId).map((span) => span.name);

      expect(children(server)).toEqual(
        expect.arrayContaining(['authenticate', 'load context', 'invoke_agent', 'save turn']),
      );
      const [agent] = named('invoke_agent');
      expect(agent.attributes).toMatchObject({ 'gen_ai.agent.id': org.assistantId });
      expect(children(agent)).toEqual([
        'chat traced-model',
        'execute_tool open_tickets',
        'chat traced-model',
        'handover',
        'chat billing-model',
      ]);
      const [firstChat] = named('chat traced-model');
      expect(firstChat).toMatchObject({
        kind: 3, // CLIENT
        attributes: expect.objectContaining({
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'traced-model',
          'gen_ai.agent.name': 'generic',
          'gen_ai.response.finish_reasons': ['tool_calls'],
          'gen_ai.usage.input_tokens': expect.any(Number),
          'gen_ai.usage.output_tokens': expect.any(Number),
        }),
      });
      expect(named('execute_tool open_tickets')[0].attributes).toMatchObject({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'open_tickets',
        'gen_ai.tool.call.id': 'call_t1',
      });
      expect(named('handover')[0].attributes).toMatchObject({
        'switchboard.handover.from': 'generic',
        'switchboard.handover.to': 'billing',
      });
      expect(named('chat billing-model')[0].attributes).toMatchObject({
        'gen_ai.agent.name': 'billing',
        'gen_ai.response.finish_reasons': ['stop'],
      });
      // No prompt or completion text unless the operator turns it on.
      expect(JSON.stringify(spans)).not.toContain('open tickets.');
      // The tool API (its config opted in) and each model call got the trace, each with the span that called it.
      expect(String(apiHeaders.at(-1)?.traceparent)).toMatch(new RegExp(`^00-${TRACE_ID}-`));
      const modelParents = upstream.requests
        .slice(-3)
        .map((r) => String(r.headers.traceparent).split('-')[2]);
      expect(modelParents).toEqual(
        [...named('chat traced-model'), ...named('chat billing-model')].map((span) => span.spanId),
      );
    });
  });

  describe('without an OTLP endpoint', () => {
    it('exports nothing and sends no trace headers upstream', async () => {
      // Where an exporter built without an endpoint would send: OTLP/HTTP's default, localhost:4318.
      const receiver = await new OtlpReceiver().start({ defaultPort: true });
      try {
        const app = await startTestApp({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
        try {
          const org = await app.seedOrganization('untraced', model());
          await turn(app, org, { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` });
          expect(upstream.last.headers.traceparent).toBeUndefined();
        } finally {
          // Stopping the service flushes any span processor it has: whatever it would export is sent by now.
          await app.close();
        }
        expect(receiver.contentTypes).toEqual([]);
      } finally {
        await receiver.stop();
      }
    });
  });
});
