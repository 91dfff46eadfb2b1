import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NextFunction, Request, Response } from 'express';
import { loadConfig } from '../config/app-config.js';
import { loadConsoleAssets } from './console-assets.js';
import { ConsoleStaticMiddleware } from './console-static.middleware.js';

interface Answer {
  status?: number;
  headers: Record<string, string>;
  body?: unknown;
  passed: boolean;
}

function request(middleware: ConsoleStaticMiddleware, path: string, headers: Record<string, string> = {}) {
  const answer: Answer = { headers: {}, passed: false };
  const res = {
    setHeader: (name: string, value: string) => (answer.headers[name.toLowerCase()] = value),
    status: (code: number) => {
      answer.status = code;
      return res;
    },
    end: (body?: unknown) => (answer.body = body),
  };
  const next: NextFunction = () => (answer.passed = true);
  middleware.use({ method: 'GET', path, headers } as unknown as Request, res as unknown as Response, next);
  return answer;
}

describe('ConsoleStaticMiddleware', () => {
  it('serves the built files with the CSP, and passes on what it does not have', () => {
    const middleware = new ConsoleStaticMiddleware(loadConfig({}));
    // Whatever the build holds (or nothing when unbuilt), an unknown file is the ordinary 404.
    expect(request(middleware, '/console/nope.js').passed).toBe(true);
    expect(request(middleware, '/consoled').passed).toBe(true);
    const redirect = request(middleware, '/console');
    expect([redirect.status, redirect.headers.location]).toEqual([308, 'console/']);
  });

  it('serves nothing when CONSOLE_ENABLED=false', () => {
    const middleware = new ConsoleStaticMiddleware(loadConfig({ CONSOLE_ENABLED: 'false' }));
    expect(request(middleware, '/console/').passed).toBe(true);
    expect(request(middleware, '/console/index.html').passed).toBe(true);
  });

  it('reads a build: hashed assets are immutable, index.html is revalidated, unknown types are skipped', () => {
    const root = mkdtempSync(join(tmpdir(), 'console-build-'));
    mkdirSync(join(root, 'assets'));
    writeFileSync(join(root, 'index.html'), '<!doctype html>');
    writeFileSync(join(root, 'assets', 'index-abc.js'), 'export {}');
    writeFileSync(join(root, 'assets', 'notes.map'), '{}');
    const assets = loadConsoleAssets(root);
    expect([...assets.keys()].sort()).toEqual(['assets/index-abc.js', 'index.html']);
    expect(assets.get('assets/index-abc.js')?.immutable).toBe(true);
    expect(assets.get('index.html')?.immutable).toBe(false);
    expect(assets.get('index.html')?.contentType).toBe('text/html; charset=utf-8');
    expect(loadConsoleAssets(join(root, 'missing')).size).toBe(0);
  });

  it('tells the page how to sign in with the identity provider, and lets it reach the issuer only', () => {
    const off = request(new ConsoleStaticMiddleware(loadConfig({})), '/console/config.json');
    expect(JSON.parse(String(off.body))).toEqual({ oidc: null });
    expect(off.headers['content-security-policy']).toContain("connect-src 'self';");
    const on = request(
      new ConsoleStaticMiddleware(
        loadConfig({
          OIDC_ISSUER: 'https://id.example.com/realms/ops',
          OIDC_CLIENT_ID: 'switchboard-backend',
          ADMIN_GROUP: '/platform/admins',
          ADMIN_AUDIENCE: 'switchboard-admin',
          CONSOLE_OIDC_CLIENT_ID: 'switchboard-console',
        }),
      ),
      '/console/config.json',
    );
    expect(JSON.parse(String(on.body))).toEqual({
      oidc: { issuer: 'https://id.example.com/realms/ops', clientId: 'switchboard-console', scope: 'openid' },
    });
    expect(on.headers['content-security-policy']).toContain("connect-src 'self' https://id.example.com;");
    expect(() => loadConfig({ CONSOLE_OIDC_CLIENT_ID: 'switchboard-console' })).toThrow(
      /CONSOLE_OIDC_CLIENT_ID/,
    );
  });
});
