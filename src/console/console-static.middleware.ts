import { Inject, Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import {
  consoleAsset,
  consoleBuildDirectory,
  loadConsoleAssets,
  type ConsoleAsset,
} from './console-assets.js';
import { consoleHeaders } from './console-security.js';

/** Where the console lives; the built page finds the API relative to it (one level up). */
export const CONSOLE_PATH = '/console';

/**
 * Serves the console's build (dist/console) from memory under /console. Anything it does not
 * have goes on to the ordinary 404 envelope. `/console` (no slash) redirects to `console/` with
 * a relative Location, so it still lands right behind an ingress that strips a path prefix.
 */
@Injectable()
export class ConsoleStaticMiddleware implements NestMiddleware {
  private readonly assets: Map<string, ConsoleAsset>;
  private readonly headers: Readonly<Record<string, string>>;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.assets = config.console.enabled
      ? loadConsoleAssets(consoleBuildDirectory())
      : new Map<string, ConsoleAsset>();
    const oidc = consoleOidc(config);
    if (this.assets.size > 0) {
      this.assets.set('config.json', consoleAsset(Buffer.from(JSON.stringify({ oidc })), 'application/json'));
    }
    this.headers = consoleHeaders(oidc ? new URL(oidc.issuer).origin : undefined);
  }

  use(req: Request, res: Response, next: NextFunction): void {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    const path = req.path;
    if (path === CONSOLE_PATH) {
      res.setHeader('Location', 'console/');
      res.status(308).end();
      return;
    }
    if (!path.startsWith(`${CONSOLE_PATH}/`)) return next();
    const name = path.slice(CONSOLE_PATH.length + 1) || 'index.html';
    const asset = this.assets.get(name);
    if (asset === undefined) return next();
    for (const [header, value] of Object.entries(this.headers)) res.setHeader(header, value);
    res.setHeader('Content-Type', asset.contentType);
    res.setHeader('ETag', asset.etag);
    res.setHeader('Cache-Control', asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    if (req.headers['if-none-match'] === asset.etag) {
      res.status(304).end();
      return;
    }
    res.setHeader('Content-Length', String(asset.body.length));
    res.status(200).end(req.method === 'HEAD' ? undefined : asset.body);
  }
}

/**
 * What the console needs to sign a platform administrator in with the identity provider
 * (`config.json`, read by the page at start): null when that sign-in is off.
 */
function consoleOidc(config: AppConfig): { issuer: string; clientId: string; scope: string } | null {
  const { issuer } = config.oidc;
  const { oidcClientId, oidcScope } = config.console;
  if (issuer === undefined || oidcClientId === undefined) return null;
  return { issuer, clientId: oidcClientId, scope: oidcScope };
}
