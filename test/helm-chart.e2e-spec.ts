import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'yaml';

/**
 * The packaging as a platform engineer reads it. Neither helm nor a Docker engine can run on our
 * build machines, so this checks statically what they would otherwise catch: the chart's files
 * parse, every value a template uses exists and is documented, template blocks are balanced, the
 * chart covers every setting the service reads, and the Dockerfile and compose file keep their
 * promises (non-root, production dependencies only, healthy dependencies first).
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CHART = join(ROOT, 'deploy/helm/switchboard');

const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

function parseYaml(path: string): any {
  const document = parseDocument(read(path));
  expect({ path, errors: document.errors.map((e) => e.message) }).toEqual({ path, errors: [] });
  expect({ path, warnings: document.warnings.map((w) => w.message) }).toEqual({ path, warnings: [] });
  return document.toJS();
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

const isMap = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Dotted paths of the leaves: scalars, lists and empty maps (free-form maps such as annotations). */
function leafPaths(value: unknown, prefix = ''): string[] {
  if (!isMap(value) || Object.keys(value).length === 0) return [prefix];
  return Object.entries(value).flatMap(([key, child]) => leafPaths(child, prefix ? `${prefix}.${key}` : key));
}

function hasPath(values: unknown, path: string): boolean {
  let node = values;
  for (const key of path.split('.')) {
    if (!isMap(node) || !(key in node)) return false;
    node = node[key];
  }
  return true;
}

/**
 * The text inside each `{{ … }}` action, skipping over string literals (NOTES.txt prints a
 * template for kubectl inside one) and comments.
 */
function templateActions(text: string): string[] {
  const actions: string[] = [];
  let start = text.indexOf('{{');
  while (start !== -1) {
    let end = start + 2;
    const opening = text.slice(end).match(/^-?\s*\/\*/);
    if (opening) {
      end = text.indexOf('*/', end + opening[0].length) + 2;
      end = text.indexOf('}}', end);
    } else {
      let quote: string | null = null;
      for (; end < text.length; end++) {
        const char = text[end];
        if (quote) {
          if (char === '\\' && quote === '"') end++;
          else if (char === quote) quote = null;
        } else if (char === '"' || char === '`') quote = char;
        else if (text.startsWith('}}', end)) break;
      }
    }
    if (end < 0 || end >= text.length) throw new Error(`unterminated action at offset ${start}`);
    actions.push(
      text
        .slice(start + 2, end)
        .replace(/^-\s/, '')
        .replace(/\s-$/, '')
        .trim(),
    );
    start = text.indexOf('{{', end + 2);
  }
  return actions;
}

/** Dockerfile instructions with continuation lines joined and comments dropped. */
function dockerInstructions(text: string): { keyword: string; args: string }[] {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [keyword, ...rest] = line.split(/\s+/);
      return { keyword: keyword.toUpperCase(), args: rest.join(' ') };
    });
}

const chartFiles = filesUnder(join(CHART, 'templates'));
const templates = chartFiles.map((path) => ({
  name: relative(CHART, path),
  text: readFileSync(path, 'utf8'),
}));

describe('Helm chart deploy/helm/switchboard', () => {
  let values: any;
  beforeAll(() => {
    values = parseYaml('deploy/helm/switchboard/values.yaml');
  });

  it('has the layout `helm create` produces, plus the migration Job', () => {
    for (const file of [
      'Chart.yaml',
      'values.yaml',
      '.helmignore',
      'README.md',
      'templates/_helpers.tpl',
      'templates/NOTES.txt',
      'templates/deployment.yaml',
      'templates/service.yaml',
      'templates/ingress.yaml',
      'templates/httproute.yaml',
      'templates/hpa.yaml',
      'templates/pdb.yaml',
      'templates/configmap.yaml',
      'templates/serviceaccount.yaml',
      'templates/migration-job.yaml',
      'templates/tests/test-connection.yaml',
    ]) {
      expect({ file, exists: existsSync(join(CHART, file)) }).toEqual({ file, exists: true });
    }
  });

  it('has a Chart.yaml with apiVersion v2, name, version and the service version as appVersion', () => {
    const chart = parseYaml('deploy/helm/switchboard/Chart.yaml');
    const pkg = JSON.parse(read('package.json')) as { version: string };
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'switchboard', type: 'application' });
    expect(chart.version).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
    expect(chart.appVersion).toBe(pkg.version);
  });

  it('has a values.yaml that parses to a map', () => {
    expect(isMap(values)).toBe(true);
  });

  it('uses only .Values paths that exist in values.yaml', () => {
    const missing: string[] = [];
    let used = 0;
    for (const { name, text } of templates) {
      for (const match of text.matchAll(/\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g)) {
        used += 1;
        const path = match[1].slice(1);
        if (!hasPath(values, path)) missing.push(`${name}: .Values.${path}`);
      }
    }
    expect(used).toBeGreaterThan(50);
    expect(missing).toEqual([]);
  });

  it('has balanced template blocks and defines every template it includes', () => {
    const defined = new Set<string>();
    const included: string[] = [];
    for (const { name, text } of templates) {
      const open: string[] = [];
      for (const action of templateActions(text)) {
        if (action.startsWith('/*')) continue;
        const keyword = /^(if|with|range|define|block|end)\b/.exec(action)?.[1];
        if (keyword === 'end') {
          expect({ name, unexpectedEnd: open.pop() === undefined }).toEqual({ name, unexpectedEnd: false });
        } else if (keyword) {
          open.push(keyword);
        }
        const definition = /^define "([^"]+)"/.exec(action);
        if (definition) defined.add(definition[1]);
        for (const use of action.matchAll(/\b(?:include|template) "([^"]+)"/g)) included.push(use[1]);
      }
      expect({ name, unclosed: open }).toEqual({ name, unclosed: [] });
    }
    expect(included.filter((used) => !defined.has(used))).toEqual([]);
    for (const { text } of templates) {
      for (const ref of text.matchAll(/\.Template\.BasePath "\/([^"]+)"/g)) {
        expect(existsSync(join(CHART, 'templates', ref[1]))).toBe(true);
      }
    }
  });

  it('documents every value, and nothing else, in the README table', () => {
    const readme = read('deploy/helm/switchboard/README.md');
    const section = readme.slice(readme.indexOf('\n## Values'));
    const documented = [...section.matchAll(/^\|\s*`([^`]+)`\s*\|/gm)].map((m) => m[1]);
    const leaves = leafPaths(values);
    expect(leaves.filter((leaf) => !documented.includes(leaf))).toEqual([]);
    expect(documented.filter((key) => !leaves.includes(key))).toEqual([]);
  });

  it('exposes every variable the service reads, and only those', () => {
    // Read only in src/config/app-config.ts, always as `helper(env, 'NAME', …)`.
    const serviceVariables = new Set(
      [...read('src/config/app-config.ts').matchAll(/\(env, '([A-Z][A-Z0-9_]*)'/g)].map((m) => m[1]),
    );
    expect(serviceVariables.size).toBeGreaterThan(20);
    // Set by the templates from other values or Secrets.
    const setByChart = [
      'PORT',
      'MIGRATIONS_RUN_ON_BOOT',
      'SHUTDOWN_DELAY_SECONDS',
      'SHUTDOWN_GRACE_SECONDS',
      'METRICS_TOKEN',
      'METRICS_PUBLIC',
      'DATABASE_URL',
      'REDIS_URL',
    ];
    // Only for the embedded database of a single process.
    const notForKubernetes = ['EMBEDDED_DATA_DIR', 'EMBEDDED_MAINTENANCE_SECONDS', 'QUICKSTART'];
    const allTemplates = templates.map((t) => t.text).join('\n') + JSON.stringify(values.secretEnv);
    for (const name of setByChart)
      expect({ name, set: allTemplates.includes(name) }).toEqual({ name, set: true });

    const configKeys = Object.keys(values.config as Record<string, unknown>);
    expect(configKeys.filter((name) => !serviceVariables.has(name))).toEqual([]);
    const covered = new Set([...configKeys, ...setByChart, ...notForKubernetes]);
    expect([...serviceVariables].filter((name) => !covered.has(name))).toEqual([]);
  });

  it('gives pods time to drain: the termination grace covers the service own shutdown', () => {
    const { preStopSleepSeconds, delaySeconds, graceSeconds, closeMarginSeconds } = values.shutdown;
    expect(preStopSleepSeconds).toBeGreaterThan(0);
    // The service ends cut streams within 2 s and exits by itself 12 s after delay + grace.
    expect(closeMarginSeconds).toBeGreaterThanOrEqual(12);
    expect(delaySeconds).toBeGreaterThanOrEqual(0);
    expect(graceSeconds).toBeGreaterThan(0);
    expect(read('deploy/helm/switchboard/templates/deployment.yaml')).toContain(
      'terminationGracePeriodSeconds: {{ include "switchboard.terminationGracePeriodSeconds" . }}',
    );
  });

  it('configures the ingress for streaming and runs migrations in a pre-install/pre-upgrade hook', () => {
    const ingress = read('deploy/helm/switchboard/templates/ingress.yaml');
    expect(ingress).toContain('"nginx.ingress.kubernetes.io/proxy-buffering" "off"');
    expect(ingress).toContain('"nginx.ingress.kubernetes.io/proxy-read-timeout" "3600"');
    expect(ingress).toContain('"nginx.ingress.kubernetes.io/proxy-send-timeout" "3600"');
    const job = read('deploy/helm/switchboard/templates/migration-job.yaml');
    expect(job).toContain('"helm.sh/hook": pre-install,pre-upgrade');
    expect(job).toContain('"dist/src/database/migrations.cli.js", "run"');
  });
});

describe('Dockerfile', () => {
  const instructions = dockerInstructions(read('Dockerfile'));
  const stages = instructions.reduce<{ keyword: string; args: string }[][]>((all, instruction) => {
    if (instruction.keyword === 'FROM') all.push([]);
    all.at(-1)?.push(instruction);
    return all;
  }, []);
  const runtime = stages.at(-1) ?? [];

  it('builds in several stages and runs on an LTS (even-numbered) Node slim image', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const args = new Map(
      instructions
        .filter((i) => i.keyword === 'ARG' && i.args.includes('='))
        .map((i) => i.args.split('=') as [string, string]),
    );
    const base = runtime[0].args
      .split(/\s+/)[0]
      .replace(/^\$\{(\w+)\}$/, (_m, name: string) => args.get(name) ?? '');
    const match = /^node:(\d+)-[a-z]+-slim$/.exec(base);
    expect(match).not.toBeNull();
    expect(Number(match?.[1]) % 2).toBe(0);
  });

  it('installs production dependencies only and runs as a non-root user in production mode', () => {
    expect(
      instructions.some((i) => i.keyword === 'RUN' && /npm (ci|install)\b.*--omit=dev/.test(i.args)),
    ).toBe(true);
    const user = runtime.filter((i) => i.keyword === 'USER').at(-1)?.args;
    expect(user).toBeDefined();
    expect(user?.split(':')[0]).not.toMatch(/^(root|0)$/);
    expect(runtime.some((i) => i.keyword === 'ENV' && i.args.includes('NODE_ENV=production'))).toBe(true);
  });

  it('exposes 8080, checks /healthz and starts the compiled service directly', () => {
    expect(runtime.some((i) => i.keyword === 'EXPOSE' && i.args === '8080')).toBe(true);
    expect(runtime.find((i) => i.keyword === 'HEALTHCHECK')?.args).toContain('/healthz');
    expect(runtime.find((i) => i.keyword === 'CMD')?.args).toBe('["node", "dist/src/main.js"]');
  });

  it('copies only files that exist and that .dockerignore lets through, and keeps secrets out', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    expect(ignored).toEqual(expect.arrayContaining(['.env', 'node_modules', '.git']));
    const sources = instructions
      .filter((i) => i.keyword === 'COPY' && !i.args.includes('--from='))
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1))
      .filter((arg) => !arg.startsWith('--'));
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect({ source, exists: existsSync(join(ROOT, source)) }).toEqual({ source, exists: true });
      expect({ source, ignored: ignored.includes(source) }).toEqual({ source, ignored: false });
    }
  });
});

describe('docker-compose.yml', () => {
  let compose: any;
  beforeAll(() => {
    compose = parseYaml('docker-compose.yml');
  });

  it('runs the service with PostgreSQL 16 (with pgvector) and Redis 7, started healthy first', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['postgres', 'redis', 'switchboard']);
    const { switchboard, postgres, redis } = compose.services;
    expect(postgres.image).toMatch(/^pgvector\/pgvector:pg16\b/);
    expect(redis.image).toMatch(/^redis:7\b/);
    expect(postgres.healthcheck.test).toBeDefined();
    expect(redis.healthcheck.test).toBeDefined();
    expect(switchboard.depends_on).toEqual({
      postgres: { condition: 'service_healthy' },
      redis: { condition: 'service_healthy' },
    });
    expect(new URL(switchboard.environment.DATABASE_URL).hostname).toBe('postgres');
    expect(new URL(switchboard.environment.REDIS_URL).hostname).toBe('redis');
  });

  it('reads an optional .env, keeps PostgreSQL data in a named volume and stops gracefully', () => {
    const { switchboard, postgres } = compose.services;
    expect(switchboard.env_file).toEqual([{ path: '.env', required: false }]);
    const volume = (postgres.volumes as string[])[0].split(':')[0];
    expect(Object.keys(compose.volumes)).toContain(volume);
    const stopGrace = Number(/^(\d+)s$/.exec(switchboard.stop_grace_period)?.[1]);
    expect(stopGrace).toBeGreaterThan(Number(switchboard.environment.SHUTDOWN_GRACE_SECONDS));
  });
});

describe('commands named in the packaging', () => {
  it('point at compiled files whose sources exist', () => {
    const texts = [
      read('Dockerfile'),
      ...filesUnder(join(ROOT, 'deploy')).map((path) => readFileSync(path, 'utf8')),
    ].join('\n');
    const entries = [...new Set([...texts.matchAll(/dist\/(src\/[\w/.-]+)\.js/g)].map((m) => m[1]))];
    expect(entries).toEqual(expect.arrayContaining(['src/main', 'src/database/migrations.cli']));
    for (const entry of entries) {
      expect({ entry, exists: existsSync(join(ROOT, `${entry}.ts`)) }).toEqual({ entry, exists: true });
    }
  });
});
