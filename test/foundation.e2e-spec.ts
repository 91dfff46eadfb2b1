import { createHash } from 'node:crypto';
import { MetadataScanner, ModulesContainer, Reflector } from '@nestjs/core';
import { HAS_OWN_AUTH, IS_PUBLIC, REQUIRED_SCOPES } from '../src/auth/auth.decorators.js';
import { startTestApp, type TestApp } from './support/test-app.js';

describe('foundation: boot, health and the error envelope', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ BODY_LIMIT: '16kb' });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('serves liveness and readiness without a key', async () => {
    const alive = await fetch(`${app.baseUrl}/healthz`);
    expect(alive.status).toBe(200);
    expect(await alive.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${app.baseUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      status: 'ready',
      checks: { accepting: true, database: true, migrations: true },
    });
  });

  it('answers an unknown route with 404 not_found in the envelope, with a request id', async () => {
    const res = await fetch(`${app.baseUrl}/v1/nothing-here`, { method: 'POST' });
    expect(res.status).toBe(404);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    expect(await res.json()).toEqual({
      error: { type: 'not_found_error', code: 'not_found', message: expect.any(String) },
    });
  });

  it('echoes a sane incoming x-request-id and replaces an unsafe one', async () => {
    const kept = await fetch(`${app.baseUrl}/healthz`, { headers: { 'x-request-id': 'trace-123' } });
    expect(kept.headers.get('x-request-id')).toBe('trace-123');
    const replaced = await fetch(`${app.baseUrl}/healthz`, {
      headers: { 'x-request-id': 'bad id <script>' },
    });
    expect(replaced.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('answers JSON without an ETag, and a conditional GET with the whole reply', async () => {
    // The tag Express would have computed for this body (etag package: length and SHA-1).
    const body = JSON.stringify({ status: 'ok' });
    const hash = createHash('sha1').update(body).digest('base64').slice(0, 27);
    const tag = `W/"${Buffer.byteLength(body).toString(16)}-${hash}"`;
    const first = await fetch(`${app.baseUrl}/healthz`);
    expect(first.headers.get('etag')).toBeNull();
    const again = await fetch(`${app.baseUrl}/healthz`, { headers: { 'if-none-match': tag } });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ status: 'ok' });
  });

  it('answers malformed JSON with 400 invalid_request without leaking the parser error', async () => {
    const res = await fetch(`${app.baseUrl}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"model": ',
    });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body).toEqual({
      error: {
        type: 'invalid_request_error',
        code: 'invalid_request',
        message: 'Request body is not valid JSON',
      },
    });
  });

  it('answers a body over the limit with 413 payload_too_large in the envelope', async () => {
    const res = await fetch(`${app.baseUrl}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'x'.repeat(32 * 1024) }),
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: unknown }).error).toMatchObject({
      code: 'payload_too_large',
      type: 'invalid_request_error',
    });
  });

  it('declares an access policy on every route (deny by default)', () => {
    const modules = app.running.app.get(ModulesContainer);
    const scanner = new MetadataScanner();
    const reflector = app.running.app.get(Reflector);
    const undeclared: string[] = [];
    let routes = 0;
    for (const wrapper of [...modules.values()].flatMap((m) => [...m.controllers.values()])) {
      const instance = wrapper.instance as object | undefined;
      if (!instance) continue;
      const prototype = Object.getPrototypeOf(instance) as object;
      for (const name of scanner.getAllMethodNames(prototype)) {
        const handler = (prototype as Record<string, unknown>)[name] as () => unknown;
        if (Reflect.getMetadata('path', handler) === undefined) continue;
        routes += 1;
        const targets = [handler, instance.constructor];
        const declared =
          reflector.getAllAndOverride(IS_PUBLIC, targets) ||
          reflector.getAllAndOverride(HAS_OWN_AUTH, targets) ||
          reflector.getAllAndOverride(REQUIRED_SCOPES, targets);
        if (!declared) undeclared.push(`${instance.constructor.name}.${name}`);
      }
    }
    expect(routes).toBeGreaterThan(1);
    expect(undeclared).toEqual([]);
  });
});
