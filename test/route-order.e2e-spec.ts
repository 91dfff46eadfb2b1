import type { Application } from 'express';
import { startTestApp, type TestApp } from './support/test-app.js';

/** What this test reads of a router layer (Express 5's `router` package). */
interface RouterLayer {
  name: string;
  route?: { path: string; methods: Record<string, boolean> };
  match(path: string): boolean;
}

/** A route layer: its method and path as registered. */
interface RouteAt {
  index: number;
  method: string;
  path: string;
  layer: RouterLayer;
}

/** The app's router stack, in the order Express walks it for every request. */
function routerStack(app: TestApp): RouterLayer[] {
  const express = app.running.app.getHttpAdapter().getInstance() as Application;
  return (express.router as unknown as { stack: RouterLayer[] }).stack;
}

function routes(stack: RouterLayer[]): RouteAt[] {
  return stack.flatMap((layer, index) =>
    layer.route
      ? Object.keys(layer.route.methods)
          .filter((method) => method !== '_all')
          .map((method) => ({ index, method, path: layer.route!.path, layer }))
      : [],
  );
}

/** A concrete path the route's template matches: each `:param` as a sample value, wildcards as one segment. */
function sample(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, 'sample_$1').replace(/\*[A-Za-z0-9_]*/g, 'sample');
}

/**
 * Express walks the router's layers in order for every request until one matches: the turn routes
 * come first (ResponsesModule is imported first), so a turn does not test ninety other layers.
 */
describe('route order', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  }, 120_000);

  afterAll(async () => {
    await app?.close();
  });

  it('matches the turn routes before every other route', () => {
    const all = routes(routerStack(app));
    // The last layer of a method and path is the controller's (the in-flight cap's middleware on
    // POST /v1/responses is a route layer too, registered before every controller).
    const at = (method: string, path: string) =>
      all.findLast((route) => route.method === method && route.path === path)?.index;
    const create = at('post', '/v1/responses');
    const read = at('get', '/v1/responses/:id');
    expect(create).toBeDefined();
    expect(read).toBeDefined();
    // Behind the edge middleware and a few static routes only, not behind the other modules' ~80
    // (they were the 44th and 46th of 93 layers before).
    expect(create!).toBeLessThan(12);
    expect(read!).toBeLessThan(12);
  });

  it('has no route shadowed by one registered before it', () => {
    const all = routes(routerStack(app));
    const shadowed: string[] = [];
    for (const [position, later] of all.entries()) {
      const path = sample(later.path);
      for (const earlier of all.slice(0, position)) {
        if (earlier.method !== later.method || earlier.path === later.path) continue;
        if (earlier.layer.match(path)) {
          shadowed.push(`${later.method} ${later.path} by ${earlier.path}`);
        }
      }
    }
    expect(shadowed).toEqual([]);
  });
});
