import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

/**
 * The peer arm: Portkey's open-source AI gateway, the closest peer written for Node, relaying the
 * same fake upstream (`x-portkey-provider: openai`, `x-portkey-custom-host: <upstream>/v1`). It
 * is installed by the bench on first use into bench/.peer (gitignored), never as a dependency of
 * the project, with `npm install --prefix bench/.peer --ignore-scripts @portkey-ai/gateway@<pin>`
 * (its only install script is `patch-package`, which has no patches to apply in the package).
 *
 * Workaround applied to the installed copy (bench/.peer/…/build/start-server.js): Portkey appends
 * its `x-portkey-*` headers to the response it returns; for a streamed reply that is the
 * upstream's `fetch` Response, whose headers are immutable, so with a current
 * `@hono/node-server` every stream answers 500 `TypeError: immutable` (Portkey-AI/gateway#1389,
 * #1550). The patch copies such a response into a new Response (same status, headers and body
 * stream) before the headers are changed, and makes the caller use the copy: the approach of
 * Portkey-AI/gateway#1551. Responses with mutable headers (JSON replies) are left as they were.
 */
export const PEER_PACKAGE = '@portkey-ai/gateway';
export const PEER_VERSION = '1.15.2';
export const PEER_DIR = resolve('bench/.peer');

/** [original, replacement]: each must occur exactly once in the installed build. */
const PATCHES: [string, string][] = [
  [
    'updateHeaders(e,t,a){return e.headers.append(',
    'updateHeaders(e,t,a){try{e.headers.delete("x-portkey-bench-probe")}catch{e=new Response(e.body,e)}return e.headers.append(',
  ],
  [
    'this.updateHeaders(i,n.cacheStatus,o),{response:i',
    'i=this.updateHeaders(i,n.cacheStatus,o),{response:i',
  ],
];
const PATCH_ID = 'copy-immutable-response-v1';

export interface PeerInstall {
  /** The gateway's start script (`build/start-server.js`, its `bin`). */
  entry: string;
  /** Installed versions of the gateway and the HTTP layer it runs on. */
  versions: Record<string, string>;
  /** What was done to the installed copy, for the report. */
  patch: string;
}

const execFileAsync = promisify(execFile);

function installedVersion(name: string): string {
  try {
    const text = readFileSync(join(PEER_DIR, 'node_modules', name, 'package.json'), 'utf8');
    return (JSON.parse(text) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Installs and patches the gateway once; later runs reuse bench/.peer while its marker matches. */
export async function ensurePeer(log: (line: string) => void): Promise<PeerInstall> {
  const entry = join(PEER_DIR, 'node_modules', PEER_PACKAGE, 'build', 'start-server.js');
  const marker = join(PEER_DIR, 'installed.json');
  const wanted = { version: PEER_VERSION, patch: PATCH_ID };
  const current = existsSync(marker) ? (JSON.parse(await readFile(marker, 'utf8')) as typeof wanted) : null;
  if (current?.version !== wanted.version || current.patch !== wanted.patch || !existsSync(entry)) {
    log(`installing ${PEER_PACKAGE}@${PEER_VERSION} into ${PEER_DIR} (once)`);
    await rm(PEER_DIR, { recursive: true, force: true });
    await mkdir(PEER_DIR, { recursive: true });
    await writeFile(
      join(PEER_DIR, 'package.json'),
      `${JSON.stringify({ name: 'switchboard-bench-peer', private: true }, null, 2)}\n`,
    );
    await execFileAsync(
      'npm',
      [
        'install',
        '--prefix',
        PEER_DIR,
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        '--save-exact',
        `${PEER_PACKAGE}@${PEER_VERSION}`,
      ],
      { timeout: 300_000, maxBuffer: 16 * 1024 * 1024 },
    );
    let source = await readFile(entry, 'utf8');
    for (const [original, replacement] of PATCHES) {
      const count = source.split(original).length - 1;
      if (count !== 1) {
        throw new Error(`the streaming workaround does not apply to this build (${count} matches)`);
      }
      source = source.replace(original, replacement);
    }
    await writeFile(entry, source);
    await writeFile(marker, `${JSON.stringify(wanted)}\n`);
  }
  return {
    entry,
    versions: Object.fromEntries(
      [PEER_PACKAGE, 'hono', '@hono/node-server'].map((name) => [name, installedVersion(name)]),
    ),
    patch:
      'streamed replies: the upstream Response (immutable headers) is copied into a new Response before Portkey adds its headers (Portkey-AI/gateway#1389, #1550; the approach of #1551)',
  };
}

/** Headers that make the gateway relay a request to the fake upstream as an OpenAI provider. */
export function peerHeaders(upstreamBaseUrl: string, apiKey: string): Record<string, string> {
  return {
    authorization: `Bearer ${apiKey}`,
    'x-portkey-provider': 'openai',
    'x-portkey-custom-host': upstreamBaseUrl,
  };
}
