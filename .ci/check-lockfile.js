/* global console, process, URL */
// Fails when package-lock.json cannot install on every platform: each optional dependency a
// locked package declares (per-platform binaries such as @swc/core-darwin-arm64) must be locked
// too, or `npm ci` refuses the lockfile ("Missing: … from lock file"). No network needed.
import { readFileSync } from 'node:fs';

const lock = JSON.parse(readFileSync(new URL('../package-lock.json', import.meta.url), 'utf8'));
const packages = lock.packages ?? {};
const missing = [];
for (const [path, entry] of Object.entries(packages)) {
  for (const name of Object.keys(entry.optionalDependencies ?? {})) {
    // npm resolves a dependency from the package's own node_modules upwards.
    const segments = path.split('/node_modules/');
    const found = segments.some((_, depth) => {
      const base = segments.slice(0, segments.length - depth).join('/node_modules/');
      return `${base}/node_modules/${name}`.replace(/^\//, '') in packages;
    });
    if (!found && !(`node_modules/${name}` in packages))
      missing.push(`${name} (wanted by ${path || 'the root'})`);
  }
}
if (missing.length > 0) {
  console.error(
    'package-lock.json lacks optional platform packages, so `npm ci` fails on some machines:\n  ' +
      missing.join('\n  ') +
      '\nPin the package to the newest version whose binaries the registry has for every platform ' +
      '(README, "Upgrading dependencies"), then regenerate the lockfile.',
  );
  process.exit(1);
}
console.log(
  `package-lock.json: every optional platform package is locked (${Object.keys(packages).length} entries)`,
);
