import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { RequestMethod } from '@nestjs/common';
import {
  HTTP_CODE_METADATA,
  METHOD_METADATA,
  PATH_METADATA,
  ROUTE_ARGS_METADATA,
} from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { MetadataScanner, ModulesContainer, Reflector } from '@nestjs/core';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { AssistantsService } from '../src/assistants/assistants.service.js';
import { HAS_OWN_AUTH, IS_PUBLIC, REQUIRED_SCOPES } from '../src/auth/auth.decorators.js';
import { ERROR_CATALOGUE } from '../src/common/errors/error-catalogue.js';
import { MemoryService } from '../src/memory/memory.service.js';
import { buildOpenApiDocument } from '../src/openapi/openapi.builder.js';
import { documentedErrorRows, errorTableRows } from '../src/openapi/error-table.js';
import { documentedParameterRows, parameterTableRows } from '../src/openapi/parameter-table.js';
import { call, type ApiReply } from './support/http.js';
import { parseSse } from './support/sse.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

type Json = Record<string, any>;

const STALE = 'is stale: run `npm run openapi` and commit docs/openapi.json and docs/api.md';

/** A route as Nest registered it: method, OpenAPI-style path, and its access and status metadata. */
interface RegisteredRoute {
  method: string;
  path: string;
  handler: string;
  access: 'public' | 'own' | string[];
  /** The status Nest answers with when the handler returns normally; null when it writes its own. */
  defaultStatus: number | null;
}

/** Joins controller and method paths the way Nest's router does, with `:param` as `{param}`. */
function joinPath(controllerPath: string, methodPath: string): string {
  const segments = [controllerPath, methodPath]
    .map((part) => part.replace(/^\/+|\/+$/g, ''))
    .filter((part) => part.length > 0);
  return `/${segments.join('/')}`.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function asList(value: string | string[] | undefined): string[] {
  if (value === undefined) return ['/'];
  return Array.isArray(value) ? value : [value];
}

/** Every route of every controller in the running app, read from Nest's own metadata. */
function registeredRoutes(app: TestApp): RegisteredRoute[] {
  const modules = app.running.app.get(ModulesContainer);
  const reflector = app.running.app.get(Reflector);
  const scanner = new MetadataScanner();
  const routes: RegisteredRoute[] = [];
  for (const wrapper of [...modules.values()].flatMap((module) => [...module.controllers.values()])) {
    const instance = wrapper.instance as object | undefined;
    if (!instance) continue;
    const controller = instance.constructor;
    const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
    for (const name of scanner.getAllMethodNames(prototype)) {
      const handler = prototype[name] as () => unknown;
      const methodPath = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
      if (methodPath === undefined) continue;
      const method =
        RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod].toLowerCase();
      const targets = [handler, controller];
      const access: RegisteredRoute['access'] = reflector.getAllAndOverride(IS_PUBLIC, targets)
        ? 'public'
        : reflector.getAllAndOverride(HAS_OWN_AUTH, targets)
          ? 'own'
          : [...(reflector.getAllAndOverride<string[]>(REQUIRED_SCOPES, targets) ?? []), 'full_access'];
      const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, name) ?? {}) as Record<
        string,
        { data?: { passthrough?: boolean } }
      >;
      const writesOwnResponse = Object.entries(args).some(
        ([key, arg]) => key.startsWith(`${RouteParamtypes.RESPONSE}:`) && !arg.data?.passthrough,
      );
      const httpCode = Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined;
      const defaultStatus = writesOwnResponse ? null : (httpCode ?? (method === 'post' ? 201 : 200));
      for (const controllerPath of asList(Reflect.getMetadata(PATH_METADATA, controller))) {
        for (const path of asList(methodPath)) {
          routes.push({
            method,
            path: joinPath(controllerPath, path),
            handler: `${controller.name}.${name}`,
            access,
            defaultStatus,
          });
        }
      }
    }
  }
  return routes;
}

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

function documentedOperations(document: Json): { method: string; path: string; operation: Json }[] {
  return Object.entries(document.paths as Record<string, Json>).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.has(method))
      .map(([method, operation]) => ({ method, path, operation: operation as Json })),
  );
}

/** Every `$ref` anywhere in the document, with where it was found. */
function collectRefs(node: unknown, at: string, found: { ref: string; at: string }[] = []) {
  if (Array.isArray(node)) node.forEach((child, index) => collectRefs(child, `${at}/${index}`, found));
  else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') found.push({ ref: value, at });
      else collectRefs(value, `${at}/${key}`, found);
    }
  }
  return found;
}

function resolvePointer(document: Json, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  return ref
    .slice(2)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce<unknown>((node, token) => (node as Json | undefined)?.[token], document);
}

describe('the OpenAPI document', () => {
  let app: TestApp;
  const built = buildOpenApiDocument() as Json;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('is checked in up to date (docs/openapi.json and the generated tables of docs/api.md)', async () => {
    const checkedIn = JSON.parse(
      await readFile(resolve('docs', 'openapi.json'), 'utf8').catch(() => 'null'),
    ) as Json | null;
    if (JSON.stringify(checkedIn) !== JSON.stringify(built)) throw new Error(`docs/openapi.json ${STALE}`);
    const markdown = await readFile(resolve('docs', 'api.md'), 'utf8');
    if (JSON.stringify(documentedErrorRows(markdown)) !== JSON.stringify(errorTableRows())) {
      throw new Error(`The error table of docs/api.md ${STALE}`);
    }
    if (JSON.stringify(documentedParameterRows(markdown)) !== JSON.stringify(parameterTableRows())) {
      throw new Error(`The request parameter table of docs/api.md ${STALE}`);
    }
  });

  it('documents exactly the routes the app registers, with their access and success status', () => {
    const routes = registeredRoutes(app);
    const operations = documentedOperations(built);
    const key = (entry: { method: string; path: string }) => `${entry.method.toUpperCase()} ${entry.path}`;

    expect(routes.length).toBeGreaterThan(20);
    expect(operations.map(key).sort()).toEqual([...new Set(routes.map(key))].sort());

    for (const route of routes) {
      const operation = operations.find((candidate) => key(candidate) === key(route))!.operation;
      const context = `${key(route)} (${route.handler})`;
      if (route.access === 'public') {
        expect({ context, security: operation.security }).toEqual({ context, security: [] });
      } else {
        expect({ context, secured: operation.security.length > 0 }).toEqual({ context, secured: true });
      }
      const scopes = Array.isArray(route.access) ? [...route.access].sort() : [];
      expect({ context, scopes: [...operation['x-required-scopes']].sort() }).toEqual({ context, scopes });
      // An API-key route may answer every authentication error; a public one never does.
      const statuses = Object.keys(operation.responses);
      if (Array.isArray(route.access))
        expect({ context, statuses }).toMatchObject({
          context,
          statuses: expect.arrayContaining(['401', '403', '429']),
        });

      const successes = statuses.filter((status) => status.startsWith('2'));
      if (route.defaultStatus !== null && successes.length > 0) {
        expect({ context, successes }).toEqual({
          context,
          successes: expect.arrayContaining([String(route.defaultStatus)]),
        });
      }
    }
  });

  it('is served at GET /openapi.json without a key', async () => {
    const reply = await call(app.baseUrl, 'GET', '/openapi.json');
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.body).toEqual(built);
  });

  it('is valid OpenAPI 3.1 whose every $ref resolves', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(built));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');

    expect(built.openapi).toBe('3.1.0');
    expect(built.info).toMatchObject({
      title: 'Switchboard',
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
    });
    expect(built.servers).toEqual([{ url: '/' }]);

    const unresolved = collectRefs(built, '#').filter(({ ref }) => resolvePointer(built, ref) === undefined);
    expect(unresolved).toEqual([]);

    const operations = documentedOperations(built);
    const ids = operations.map(({ operation }) => operation.operationId as string);
    expect(new Set(ids).size).toBe(ids.length);

    // Every `{param}` of a path is declared as a path parameter of each of its operations, and no more.
    for (const { method, path, operation } of operations) {
      const declared = ((operation.parameters ?? []) as Json[])
        .map(
          (parameter) =>
            (parameter.$ref ? resolvePointer(built, parameter.$ref as string) : parameter) as Json,
        )
        .filter((parameter) => parameter.in === 'path')
        .map((parameter) => parameter.name as string);
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
      expect({ operation: `${method} ${path}`, declared: declared.sort() }).toEqual({
        operation: `${method} ${path}`,
        declared: templated.sort(),
      });
    }
  });

  it('takes the error codes from the catalogue, and each error status only names codes of that status', () => {
    expect(built.components.schemas.ErrorObject.properties.code.enum).toEqual(Object.keys(ERROR_CATALOGUE));
    for (const { method, path, operation } of documentedOperations(built)) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
        const schema = response.content?.['application/json']?.schema as Json | undefined;
        const envelope = [schema, ...((schema?.oneOf as Json[] | undefined) ?? [])].find((candidate) =>
          candidate?.allOf?.some((part: Json) => part.$ref === '#/components/schemas/ErrorEnvelope'),
        );
        if (!envelope) continue;
        const codes = envelope.properties.error.properties.code.enum as (keyof typeof ERROR_CATALOGUE)[];
        expect({
          at: `${method} ${path} ${status}`,
          statuses: codes.map((code) => ERROR_CATALOGUE[code].status),
        }).toEqual({
          at: `${method} ${path} ${status}`,
          statuses: codes.map(() => Number(status)),
        });
      }
    }
  });
  /**
   * What the running service answers, checked against the document: the status must be one the
   * operation lists, and the body must match that response's schema (requests sent are checked
   * against the request schema too). This is what keeps the hand-written schemas honest.
   */
  describe('matches what the service answers', () => {
    const BASE = 'https://switchboard.invalid/openapi.json';
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema({ ...built, $id: BASE });
    const compiled = new Map<string, ValidateFunction>();
    const validatorAt = (pointer: string[]): ValidateFunction => {
      const ref = `${BASE}#/${pointer.map((token) => token.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;
      const validate = compiled.get(ref) ?? ajv.compile({ $ref: ref });
      compiled.set(ref, validate);
      return validate;
    };
    const check = (validate: ValidateFunction, value: unknown, what: string) => {
      if (!validate(value))
        throw new Error(`${what} does not match the document: ${ajv.errorsText(validate.errors)}`);
    };

    let org: SeededOrganization;
    let toolAssistant: string;

    /** Calls a documented operation (`path` is its template; `url` the concrete path) and checks both sides. */
    async function documented(
      method: string,
      path: string,
      url: string,
      options: { key?: string; headers?: Record<string, string>; body?: unknown } = {},
    ): Promise<ApiReply> {
      const operation = built.paths[path]?.[method] as Json | undefined;
      if (!operation) throw new Error(`${method.toUpperCase()} ${path} is not in the document`);
      const what = `${method.toUpperCase()} ${url}`;
      const reply = await call(app.baseUrl, method.toUpperCase(), url, options);
      // A body the service accepted must be one the document allows.
      if (reply.status < 300 && options.body !== undefined && operation.requestBody) {
        check(
          validatorAt(['paths', path, method, 'requestBody', 'content', 'application/json', 'schema']),
          options.body,
          `The request body of ${what}`,
        );
      }
      const response = operation.responses[String(reply.status)] as Json | undefined;
      if (!response) throw new Error(`${what} answered ${reply.status}, a status the document does not list`);
      expect(reply.headers.get('x-request-id')).toBeTruthy();
      const mediaType = (reply.headers.get('content-type') ?? '').split(';')[0].trim();
      if (!response.content) {
        expect({ what, body: reply.body }).toEqual({ what, body: undefined });
        return reply;
      }
      if (!response.content[mediaType]) throw new Error(`${what} answered ${mediaType}, not documented`);
      if (mediaType === 'text/event-stream') {
        const eventSchema = validatorAt(['components', 'schemas', 'ResponseStreamEvent']);
        const { events } = parseSse(reply.body as string);
        for (const event of events.filter((candidate) => candidate.data !== '[DONE]')) {
          const payload = JSON.parse(event.data) as Json;
          expect(payload.type).toBe(event.event);
          check(eventSchema, payload, `Event ${event.event} of ${what}`);
        }
        return reply;
      }
      check(
        validatorAt([
          'paths',
          path,
          method,
          'responses',
          String(reply.status),
          'content',
          mediaType,
          'schema',
        ]),
        reply.body,
        `The ${reply.status} body of ${what}`,
      );
      return reply;
    }

    beforeAll(async () => {
      org = await app.seedOrganization('openapi');
      toolAssistant = (
        await app.running.app.get(AssistantsService).create(org.id, {
          name: 'tools',
          model: {
            provider: 'offline',
            functionCalling: true,
            script: [{ match: 'weather', call: { tool: 'get_weather', arguments: { city: 'Paris' } } }],
          },
        })
      ).id;
    });

    const user = { 'x-user-id': 'ada' };

    it('responses: JSON, streams, function calls, reads and errors', async () => {
      const key = org.keys.assistant;
      const first = await documented('post', '/v1/responses', '/v1/responses', {
        key,
        headers: user,
        body: { model: org.assistantId, input: 'hello' },
      });
      expect(first.status).toBe(200);
      await documented('post', '/v1/responses', '/v1/responses', {
        key,
        headers: { ...user, 'x-switchboard-events': 'all' },
        body: { model: `asst_${org.assistantId}`, input: [{ role: 'user', content: 'again' }], stream: true },
      });
      // Reading it back takes `user` (the `assistant` scope only creates), as its own end user.
      const read = await documented('get', '/v1/responses/{id}', `/v1/responses/${first.body.id}`, {
        key: org.keys.user,
        headers: user,
      });
      expect(read.status).toBe(200);

      const tools = [
        {
          type: 'function',
          name: 'get_weather',
          description: 'Weather for a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      ];
      const pending = await documented('post', '/v1/responses', '/v1/responses', {
        key,
        body: { model: toolAssistant, input: 'weather in Paris?', tools },
      });
      expect(pending.body.status).toBe('requires_action');
      const callId = (pending.body.output as Json[]).find((item) => item.type === 'function_call')!.call_id;
      const done = await documented('post', '/v1/responses', '/v1/responses', {
        key,
        body: {
          model: toolAssistant,
          previous_response_id: pending.body.id,
          input: [{ type: 'function_call_output', call_id: callId, output: '{"celsius":21}' }],
          tools,
        },
      });
      expect(done.body.status).toBe('completed');
      const streamed = await documented('post', '/v1/responses', '/v1/responses', {
        key,
        body: { model: toolAssistant, input: 'weather again', tools, stream: true },
      });
      expect(streamed.body).toContain('response.function_call_arguments.done');

      expect((await documented('post', '/v1/responses', '/v1/responses', { key, body: {} })).status).toBe(
        400,
      );
      expect(
        (await documented('post', '/v1/responses', '/v1/responses', { body: { model: 'x' } })).status,
      ).toBe(401);
      expect(
        (
          await documented('get', '/v1/responses/{id}', `/v1/responses/${first.body.id}`, {
            key,
            headers: user,
          })
        ).status,
      ).toBe(403);
      const missing = 'resp_00000000-0000-4000-8000-000000000000';
      expect(
        (await documented('get', '/v1/responses/{id}', `/v1/responses/${missing}`, { key: org.keys.user }))
          .status,
      ).toBe(404);
    });

    it('chat history, user claims and memory', async () => {
      const key = org.keys.user;
      const conversations = await documented(
        'get',
        '/v1/chat/history/conversations',
        '/v1/chat/history/conversations?limit=1',
        { key, headers: user },
      );
      expect(conversations.body).toHaveLength(1);
      expect(conversations.headers.get('x-next-cursor')).toBeTruthy();
      const conversationId = conversations.body[0].id as string;
      const messages = '/v1/chat/history/conversations/{id}/messages';
      await documented('get', messages, `/v1/chat/history/conversations/${conversationId}/messages`, {
        key,
        headers: user,
      });
      expect(
        (
          await documented('get', messages, `/v1/chat/history/conversations/${conversationId}/messages`, {
            key,
            headers: { 'x-user-id': 'someone-else' },
          })
        ).status,
      ).toBe(404);
      expect(
        (await documented('get', '/v1/chat/history/conversations', '/v1/chat/history/conversations', { key }))
          .status,
      ).toBe(400);

      for (const prefix of ['/v1/user-claims', '/user-claims']) {
        const claim = { userId: 'ada', claimKey: 'plan', claimValue: { tier: 'gold', seats: 3 } };
        await documented('post', prefix, prefix, { key, body: claim });
        await documented('post', `${prefix}/bulk`, `${prefix}/bulk`, {
          key,
          body: { claims: [{ userId: 'ada', claimKey: 'locale', claimValue: 'fr' }] },
        });
        await documented('get', `${prefix}/{userId}`, `${prefix}/ada`, { key });
        const one = `${prefix}/{userId}/{claimKey}`;
        await documented('get', one, `${prefix}/ada/plan`, { key });
        expect((await documented('delete', one, `${prefix}/ada/plan`, { key })).status).toBe(204);
        expect((await documented('delete', one, `${prefix}/ada/plan`, { key })).status).toBe(404);
        const tooMany = Array.from({ length: 51 }, (_, index) => ({
          userId: 'ada',
          claimKey: `k${index}`,
          claimValue: 1,
        }));
        const bulk = await call(app.baseUrl, 'POST', `${prefix}/bulk`, { key, body: { claims: tooMany } });
        expect(bulk.status).toBe(422);
        check(
          validatorAt([
            'paths',
            `${prefix}/bulk`,
            'post',
            'responses',
            '422',
            'content',
            'application/json',
            'schema',
          ]),
          bulk.body,
          'The 422 of a bulk of 51',
        );
      }

      await app.running.app.get(MemoryService).saveFromModel(org.id, 'ada', org.assistantId, 'Prefers tea');
      const list = await documented('get', '/v1/memory', `/v1/memory?assistant_id=asst_${org.assistantId}`, {
        key,
        headers: user,
      });
      expect(list.body.data).toHaveLength(1);
      await documented('post', '/v1/memory/opt-out', '/v1/memory/opt-out', { key, headers: user });
      await documented('delete', '/v1/memory/opt-out', '/v1/memory/opt-out', { key, headers: user });
      expect(
        (
          await documented('delete', '/v1/memory/{itemId}', `/v1/memory/${list.body.data[0].id}`, {
            key,
            headers: user,
          })
        ).status,
      ).toBe(204);
      await documented('delete', '/v1/memory', '/v1/memory', { key, headers: user });
      expect((await documented('get', '/v1/memory', '/v1/memory', { key })).status).toBe(400);
    });

    it('the MCP gateway, probes, metrics and this document', async () => {
      // No identity provider is configured here: every gateway name is unknown.
      expect(
        (
          await documented('post', '/mcp-gateway/{name}', '/mcp-gateway/ide', {
            body: { jsonrpc: '2.0', id: 1, method: 'ping' },
          })
        ).status,
      ).toBe(404);
      const stream = await documented('get', '/mcp-gateway/{name}', '/mcp-gateway/ide');
      expect([stream.status, stream.headers.get('allow')]).toEqual([405, 'POST']);
      expect((await documented('delete', '/mcp-gateway/{name}', '/mcp-gateway/ide')).status).toBe(405);
      expect((await documented('options', '/mcp-gateway/{name}', '/mcp-gateway/ide')).status).toBe(204);
      await documented(
        'get',
        '/mcp-gateway/{name}/.well-known/oauth-protected-resource',
        '/mcp-gateway/ide/.well-known/oauth-protected-resource',
      );
      await documented(
        'get',
        '/.well-known/oauth-protected-resource/mcp-gateway/{name}',
        '/.well-known/oauth-protected-resource/mcp-gateway/ide',
      );
      expect((await documented('get', '/healthz', '/healthz')).status).toBe(200);
      expect((await documented('get', '/readyz', '/readyz')).status).toBe(200);
      expect((await documented('get', '/metrics', '/metrics')).status).toBe(200);
      expect((await documented('get', '/openapi.json', '/openapi.json')).status).toBe(200);
    });
  });
});
