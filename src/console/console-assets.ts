import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One built file of the console, held in memory (the whole build is ~100 KiB). */
export interface ConsoleAsset {
  body: Buffer;
  contentType: string;
  etag: string;
  /** Vite names files under assets/ by content hash, so they never change under one name. */
  immutable: boolean;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * The build's folder, dist/console beside dist/src: found by walking up to the package root, so
 * it is the same folder whether the service runs from dist/src (built) or src (tests).
 */
export function consoleBuildDirectory(start = dirname(fileURLToPath(import.meta.url))): string | null {
  let directory = start;
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as { name?: string };
      if (manifest.name === 'switchboard') return join(directory, 'dist', 'console');
    } catch {
      // no package.json here: keep walking up
    }
    const parent = dirname(directory);
    if (parent === directory) return null;
    directory = parent;
  }
}

export function consoleAsset(body: Buffer, contentType: string, immutable = false): ConsoleAsset {
  return {
    body,
    contentType,
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
    immutable,
  };
}

/** Reads every file of the build once; an unknown extension is not served (no guessing types). */
export function loadConsoleAssets(root: string | null): Map<string, ConsoleAsset> {
  const assets = new Map<string, ConsoleAsset>();
  if (root === null) return assets;
  const walk = (directory: string): void => {
    let entries: string[];
    try {
      entries = readdirSync(directory);
    } catch {
      return; // not built: the console answers 404 with a hint (see the middleware)
    }
    for (const entry of entries) {
      const path = join(directory, entry);
      if (statSync(path).isDirectory()) {
        walk(path);
        continue;
      }
      const contentType = TYPES[extname(entry).toLowerCase()];
      if (contentType === undefined) continue;
      const name = relative(root, path).split(sep).join('/');
      assets.set(name, consoleAsset(readFileSync(path), contentType, name.startsWith('assets/')));
    }
  };
  walk(root);
  return assets;
}
