import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let version: string | undefined;

/** The service's version from its package.json: found above src/ in tests, above dist/src when built. */
export function packageVersion(): string {
  if (version !== undefined) return version;
  let directory = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === 'switchboard' && manifest.version) return (version = manifest.version);
    } catch {
      // no package.json here: keep walking up
    }
    const parent = dirname(directory);
    if (parent === directory)
      throw new Error('package.json of switchboard not found above src/common/runtime');
    directory = parent;
  }
}
