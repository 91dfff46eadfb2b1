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

  async function turn(app: TestApp, org: SeededOrganization, headers: Record<string, string> = {}) {
    const reply = await fetch(`${app.baseUrl}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': org.keys.assistant, ...headers },
      body: JSON.stringify({ model: org.assistantId, input: 'hello' }),
    });
    expect(reply.status).toBe(200);
    return reply.json();
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
      await turn(app, org, { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` });
      const server = await receiver.waitFor((span) => span.name === 'POST /v1/responses');
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

  describe('without an OTLP endpoint', () => {
    it('exports nothing and sends no trace headers upstream', async () => {
      const receiver = await new OtlpReceiver().start();
      const app = await startTestApp({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
      try {
        const org = await app.seedOrganization('untraced', model());
        await turn(app, org, { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` });
        expect(upstream.last.headers.traceparent).toBeUndefined();
        expect(receiver.contentTypes).toEqual([]);
      } finally {
        await app.close();
        await receiver.stop();
      }
    });
  });
});
