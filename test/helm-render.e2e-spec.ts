import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { helm, helmBinary } from './support/helm.js';

/**
 * The chart as `helm` itself sees it: linted strictly and rendered with every feature on and off.
 * Static checks of the chart's files live in helm-chart.e2e-spec.ts.
 */

const CHART = 'deploy/helm/switchboard';
const found = await helmBinary();
const describeWithHelm = 'path' in found ? describe : describe.skip;
if (!('path' in found)) console.warn(`helm tests skipped: ${found.skip}`);
const binary = 'path' in found ? found.path : '';

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchboard-helm-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

let files = 0;
async function valuesFile(values: unknown): Promise<string> {
  const path = join(dir, `values-${files++}.json`);
  await writeFile(path, JSON.stringify(values));
  return path;
}

async function render(values: unknown = {}): Promise<Manifest[]> {
  const result = await helm(binary, [
    'template',
    'sb',
    CHART,
    '--namespace',
    'ai',
    '-f',
    await valuesFile(values),
  ]);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  return parseAllDocuments(result.stdout)
    .map((document) => document.toJS() as Manifest | null)
    .filter((manifest): manifest is Manifest => manifest !== null);
}

async function renderError(values: unknown): Promise<string> {
  const result = await helm(binary, ['template', 'sb', CHART, '-f', await valuesFile(values)]);
  expect(result.code).not.toBe(0);
  return result.stderr;
}

const kinds = (manifests: Manifest[]) => manifests.map((m) => `${m.kind}/${m.metadata.name}`).sort();
const find = (manifests: Manifest[], kind: string, name: string) =>
  manifests.find((m) => m.kind === kind && m.metadata.name === name);

const DOCUMENT = {
  organizations: [
    {
      slug: 'acme',
      name: 'Acme',
      assistants: [{ name: 'Support', model: { provider: 'offline' } }],
    },
  ],
};

/** Every optional feature switched on at once. */
const EVERYTHING_ON = {
  ingress: { enabled: true, tls: [{ secretName: 'tls', hosts: ['switchboard.example.com'] }] },
  httpRoute: { enabled: true, timeouts: { request: '3600s' } },
  metrics: { tokenSecret: { name: 'metrics', key: 'token' }, serviceMonitor: { enabled: true } },
  autoscaling: { enabled: true, targetMemoryUtilizationPercentage: 80 },
  migrations: {
    runOnBoot: true,
    job: { secretEnv: [{ name: 'DATABASE_URL', secretName: 'owner', key: 'url' }] },
  },
  configuration: {
    enabled: true,
    document: DOCUMENT,
    prune: true,
    secretEnv: [{ name: 'SWITCHBOARD_KEY_PORTAL', secretName: 'acme-keys', key: 'portal' }],
  },
};

describeWithHelm('the Helm chart, rendered by helm', () => {
  it('lints with --strict with the defaults and with every feature on', async () => {
    for (const values of [{}, EVERYTHING_ON]) {
      const result = await helm(binary, ['lint', '--strict', CHART, '-f', await valuesFile(values)]);
      expect({ code: result.code, out: result.stdout }).toEqual({
        code: 0,
        out: expect.stringContaining('1 chart(s) linted, 0 chart(s) failed'),
      });
    }
  });

  it('renders the defaults: deployment, service, config, autoscaler, budget and the migration hook', async () => {
    const manifests = await render();
    expect(kinds(manifests)).toEqual([
      'ConfigMap/sb-switchboard',
      'Deployment/sb-switchboard',
      'HorizontalPodAutoscaler/sb-switchboard',
      'Job/sb-switchboard-migrate',
      'Pod/sb-switchboard-test-connection',
      'PodDisruptionBudget/sb-switchboard',
      'Service/sb-switchboard',
      'ServiceAccount/sb-switchboard',
    ]);
    for (const manifest of manifests) expect(manifest.apiVersion).toMatch(/^[a-z0-9./]+$/);
  });

  it('renders every optional feature when switched on', async () => {
    const manifests = await render(EVERYTHING_ON);
    expect(kinds(manifests)).toEqual(
      expect.arrayContaining([
        'Ingress/sb-switchboard',
        'HTTPRoute/sb-switchboard',
        'ServiceMonitor/sb-switchboard',
        'ConfigMap/sb-switchboard-configuration',
        'Job/sb-switchboard-configure',
      ]),
    );
    const deployment = find(manifests, 'Deployment', 'sb-switchboard');
    const env = deployment?.spec.template.spec.containers[0].env as { name: string }[];
    expect(env.map((e) => e.name)).toContain('METRICS_TOKEN');
  });

  it('leaves out what is switched off', async () => {
    const manifests = await render({
      autoscaling: { enabled: false },
      replicaCount: 1,
      migrations: { job: { enabled: false } },
      metrics: { scrapeAnnotations: false },
    });
    expect(kinds(manifests)).toEqual([
      'ConfigMap/sb-switchboard',
      'Deployment/sb-switchboard',
      'Pod/sb-switchboard-test-connection',
      'Service/sb-switchboard',
      'ServiceAccount/sb-switchboard',
    ]);
    expect(find(manifests, 'Deployment', 'sb-switchboard')?.spec.replicas).toBe(1);
  });

  it('applies the declarative configuration in a hook Job after the migrations, from an inline document', async () => {
    const manifests = await render({ configuration: { enabled: true, document: DOCUMENT } });
    const migrate = find(manifests, 'Job', 'sb-switchboard-migrate')!;
    const configure = find(manifests, 'Job', 'sb-switchboard-configure')!;
    const document = find(manifests, 'ConfigMap', 'sb-switchboard-configuration')!;
    const weight = (m: Manifest) => Number(m.metadata.annotations?.['helm.sh/hook-weight']);
    for (const hook of [migrate, configure, document]) {
      expect(hook.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    }
    // Helm runs hooks by ascending weight: schema first, then the document, then the Job reading it.
    expect(weight(migrate)).toBeLessThan(weight(document));
    expect(weight(document)).toBeLessThan(weight(configure));

    const container = configure.spec.template.spec.containers[0];
    expect(container.command).toEqual([
      'node',
      'dist/src/admin/admin.cli.js',
      'apply',
      '--file',
      '/etc/switchboard/configuration/switchboard.yaml',
    ]);
    expect(configure.spec.backoffLimit).toBe(0);
    expect(container.terminationMessagePolicy).toBe('FallbackToLogsOnError');
    expect(configure.spec.template.spec.volumes).toContainEqual({
      name: 'configuration',
      configMap: {
        name: 'sb-switchboard-configuration',
        items: [{ key: 'switchboard.yaml', path: 'switchboard.yaml' }],
      },
    });
    const { parse } = await import('yaml');
    expect(parse(document.data!['switchboard.yaml'])).toEqual(DOCUMENT);
    // The Job reaches the same database as the pods.
    expect(container.env.map((e: { name: string }) => e.name)).toEqual(
      expect.arrayContaining(['DATABASE_URL']),
    );
  });

  it('reads the document from an existing ConfigMap or Secret, prunes on request, and takes keys from Secrets', async () => {
    const fromConfigMap = await render({
      configuration: {
        enabled: true,
        existingConfigMap: { name: 'gitops-config', key: 'sb.yaml' },
        prune: true,
      },
    });
    expect(find(fromConfigMap, 'ConfigMap', 'sb-switchboard-configuration')).toBeUndefined();
    const job = find(fromConfigMap, 'Job', 'sb-switchboard-configure')!;
    expect(job.spec.template.spec.containers[0].command).toContain('--prune');
    expect(job.spec.template.spec.volumes).toContainEqual({
      name: 'configuration',
      configMap: { name: 'gitops-config', items: [{ key: 'sb.yaml', path: 'switchboard.yaml' }] },
    });

    const fromSecret = await render({
      configuration: {
        enabled: true,
        existingSecret: { name: 'gitops-secret', key: 'doc' },
        secretEnv: [{ name: 'SWITCHBOARD_KEY_PORTAL', secretName: 'acme-keys', key: 'portal' }],
      },
    });
    const secretJob = find(fromSecret, 'Job', 'sb-switchboard-configure')!;
    expect(secretJob.spec.template.spec.volumes).toContainEqual({
      name: 'configuration',
      secret: { secretName: 'gitops-secret', items: [{ key: 'doc', path: 'switchboard.yaml' }] },
    });
    expect(secretJob.spec.template.spec.containers[0].env).toContainEqual({
      name: 'SWITCHBOARD_KEY_PORTAL',
      valueFrom: { secretKeyRef: { name: 'acme-keys', key: 'portal' } },
    });
    // Keys are referenced, never rendered: no value of a key appears anywhere.
    expect(JSON.stringify(fromSecret)).not.toMatch(/swb_[0-9A-Za-z]{20,}/);
  });

  it('refuses a configuration without exactly one source, a missing database and secrets in config', async () => {
    expect(await renderError({ configuration: { enabled: true } })).toContain(
      'configuration.enabled needs exactly one of',
    );
    expect(
      await renderError({
        configuration: { enabled: true, document: DOCUMENT, existingSecret: { name: 'x', key: 'y' } },
      }),
    ).toContain('configuration.enabled needs exactly one of');
    expect(await renderError({ secretEnv: [] })).toContain('DATABASE_URL must come from a Secret');
    expect(await renderError({ config: { OPENAI_API_KEY: 'sk-123' } })).toContain('looks like a secret');
  });
});
