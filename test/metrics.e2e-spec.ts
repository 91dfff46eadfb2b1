import type { AddressInfo } from 'node:net';
import { jest } from '@jest/globals';
import { ApiKeysService } from '../src/api-keys/api-keys.service.js';
import { AssistantsService } from '../src/assistants/assistants.service.js';
import { createApp, type RunningApp } from '../src/bootstrap/create-app.js';
import { JsonLogger } from '../src/common/logging/json-logger.js';
import { loadConfig } from '../src/config/app-config.js';
import { OrganizationsService } from '../src/organizations/organizations.service.js';
import { call } from './support/http.js';
import { postStream } from './support/sse.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

const METRICS_TOKEN = 'scrape-token-0123456789';

/** The value of one sample line of the Prometheus text format, or undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (wanted.every((pair) => line.includes(pair))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('metrics, processing time and access logs', () => {
  let database: TestDatabase;
  let running: RunningApp;
  let baseUrl: string;
  let organizationId: string;
  let key: string;
  let offlineAssistant: string;
  let unreachableAssistant: string;
  const logLines: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      QUICKSTART: 'false',
      METRICS_TOKEN,
      UPSTREAM_MAX_RETRIES: '0',
      ...database.env,
    });
    // The real JSON logger, so the test reads the lines an operator would.
    const write = process.stdout.write.bind(process.stdout);
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      if (text.startsWith('{')) logLines.push(...text.trim().split('\n'));
      else write(chunk);
      return true;
    });
    running = await createApp(config, { logger: new JsonLogger('log') });
    await running.app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${(running.app.getHttpServer().address() as AddressInfo).port}`;
    organizationId = (await running.app.get(OrganizationsService).create({ slug: 'observed' })).id;
    key = (await running.app.get(ApiKeysService).create(organizationId, 'k', ['full_access'])).secret;
    const assistants = running.app.get(AssistantsService);
    offlineAssistant = (
      await assistants.create(organizationId, { name: 'offline', model: { provider: 'offline' } })
    ).id;
    // Nothing listens on port 9 of the loopback: every call is refused.
    unreachableAssistant = (
      await assistants.create(organizationId, {
        name: 'unreachable',
        model: { provider: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', model: 'm' },
      })
    ).id;
  });
  afterAll(async () => {
    await running?.close();
    await database?.drop();
    jest.restoreAllMocks();
  });

  const scrape = () =>
    call(baseUrl, 'GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });

  it('counts requests by route template, method and status', async () => {
    for (let i = 0; i < 3; i++) expect((await call(baseUrl, 'GET', '/healthz')).status).toBe(200);
    const missing = await call(baseUrl, 'GET', '/v1/responses/resp_00000000-0000-4000-8000-000000000001', {
      key,
    });
    expect(missing.status).toBe(404);
    expect((await call(baseUrl, 'GET', '/no/such/route')).status).toBe(404);

    const metrics = await scrape();
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = metrics.body as string;
    expect(
      sample(text, 'switchboard_http_requests_total', { method: 'GET', route: '/healthz', status: '200' }),
    ).toBe(3);
    expect(
      sample(text, 'switchboard_http_requests_total', {
        method: 'GET',
        route: '/v1/responses/:id',
        status: '404',
      }),
    ).toBe(1);
    // Unknown paths share one label value instead of one series per path.
    expect(sample(text, 'switchboard_http_requests_total', { route: 'unmatched', status: '404' })).toBe(1);
    expect(text).not.toContain('/no/such/route');
    expect(
      sample(text, 'switchboard_http_request_duration_seconds_count', { route: '/healthz', status: '200' }),
    ).toBe(3);
  });

  it('reports the database pool, the in-flight cap and the other series at scrape time', async () => {
    const text = (await scrape()).body as string;
    expect(sample(text, 'switchboard_db_pool_max')).toBeGreaterThan(0);
    expect(sample(text, 'switchboard_db_pool_connections', { state: 'total' })).toBeGreaterThan(0);
    expect(sample(text, 'switchboard_db_pool_connections', { state: 'waiting' })).toBe(0);
    expect(sample(text, 'switchboard_responses_in_flight_limit')).toBe(512);
    for (const name of [
      'switchboard_upstream_request_duration_seconds',
      'switchboard_upstream_errors_total',
      'switchboard_time_to_first_token_seconds',
      'switchboard_tokens_relayed_total',
      'switchboard_open_streams',
      'switchboard_responses_in_flight',
      'switchboard_rate_limit_rejections_total',
      'switchboard_shed_requests_total',
      'process_cpu_seconds_total',
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
  });

  it('records streams, time to first token, relayed tokens and upstream failures', async () => {
    const stream = await postStream(baseUrl, key, {
      model: offlineAssistant,
      input: 'count these words please',
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('x-processing-time-ms')).toMatch(/^\d+$/);
    const deltas = stream.events.filter((event) => event.event === 'response.output_text.delta').length;
    expect(deltas).toBeGreaterThan(0);
    const failed = await call(baseUrl, 'POST', '/v1/responses', {
      key,
      body: { model: unreachableAssistant, input: 'hello?' },
    });
    expect(failed.status).toBe(503);
    expect(failed.body.error.code).toBe('upstream_unavailable');

    const text = (await scrape()).body as string;
    expect(sample(text, 'switchboard_open_streams')).toBe(0);
    expect(sample(text, 'switchboard_tokens_relayed_total')).toBe(deltas);
    expect(sample(text, 'switchboard_time_to_first_token_seconds_count', { provider: 'offline' })).toBe(1);
    expect(
      sample(text, 'switchboard_upstream_request_duration_seconds_count', {
        provider: 'offline',
        outcome: 'ok',
      }),
    ).toBe(1);
    expect(
      sample(text, 'switchboard_upstream_errors_total', {
        provider: 'openai-compatible',
        code: 'upstream_unavailable',
      }),
    ).toBe(1);
    expect(sample(text, 'switchboard_responses_in_flight')).toBe(0);
  });

  it('needs the metrics token when one is configured', async () => {
    const none = await call(baseUrl, 'GET', '/metrics');
    expect(none.status).toBe(401);
    expect(none.body).toEqual({
      error: { type: 'authentication_error', code: 'missing_token', message: expect.any(String) },
    });
    const wrong = await call(baseUrl, 'GET', '/metrics', {
      headers: { authorization: 'Bearer not-the-token' },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('invalid_token');
    // An API key is not a metrics token.
    expect((await call(baseUrl, 'GET', '/metrics', { key })).status).toBe(401);
  });

  it('sends the processing time on every answer, errors included', async () => {
    for (const reply of [
      await call(baseUrl, 'GET', '/healthz'),
      await call(baseUrl, 'GET', '/v1/responses/resp_00000000-0000-4000-8000-000000000002', { key }),
      await call(baseUrl, 'GET', '/v1/responses/resp_x', {
        key: 'swb_unknownunknownunknownunknownunknownunknown',
      }),
      await call(baseUrl, 'GET', '/no/such/route'),
    ]) {
      expect(reply.headers.get('x-processing-time-ms')).toMatch(/^\d+$/);
    }
  });

  it('writes one JSON access-log line per request with ids and the route, never the key', async () => {
    const reply = await call(baseUrl, 'GET', '/v1/responses/resp_00000000-0000-4000-8000-000000000003', {
      key,
      headers: { 'x-request-id': 'trace-metrics-1', 'x-user-token': 'user-secret-token' },
    });
    expect(reply.status).toBe(404);
    const lines = logLines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const access = lines.filter((line) => line.msg === 'request' && line.requestId === 'trace-metrics-1');
    expect(access).toEqual([
      expect.objectContaining({
        level: 'log',
        context: 'Http',
        method: 'GET',
        route: '/v1/responses/:id',
        status: 404,
        completed: true,
        organizationId,
        durationMs: expect.any(Number),
      }),
    ]);
    // Probes and scrapes stay out of the log at level "log".
    expect(lines.some((line) => line.msg === 'request' && line.route === '/healthz')).toBe(false);
    const everything = logLines.join('\n');
    expect(everything).not.toContain(key);
    expect(everything).not.toContain('user-secret-token');
    expect(everything).not.toContain(METRICS_TOKEN);
  });
});
