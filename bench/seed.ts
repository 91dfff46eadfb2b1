import { createApp } from '../src/bootstrap/create-app.js';
import { loadConfig } from '../src/config/app-config.js';
import { MemoryService } from '../src/memory/memory.service.js';
import { runAdmin } from '../src/admin/admin.runner.js';

/**
 * Creates the bench's organization, key and assistants with the admin tool's in-process entry
 * (the way an operator would), and memory items with the MemoryService (only the model can write
 * memory through the API). Runs as a child process against the database of the running service,
 * with the service's environment, and reports over IPC.
 */
export interface SeedRequest {
  organization: string;
  upstreamBaseUrl: string;
  instructions: string;
  /** Assistant name → upstream model name. */
  assistants: Record<string, string>;
  /**
   * Assistants also seeded as `<name>+fallbacks`: the same model with two fallback targets (one
   * deployment of the same model, one other model) and continuation on, for the healthy-path cost
   * of fallbacks (the `fallbacks` scenario). A healthy turn never calls them.
   */
  withFallbacks?: string[];
  memory: { assistant: string; userId: string; items: string[] } | null;
}

export interface SeedResult {
  organizationId: string;
  apiKey: string;
  /** Assistant name → id. */
  assistants: Record<string, string>;
  memoryItems: number;
  memoryError?: string;
}

async function admin(argv: string[]): Promise<any> {
  let out = '';
  let err = '';
  const code = await runAdmin(
    [...argv, '--json'],
    {
      stdout: { write: (chunk: string) => (out += chunk) },
      stderr: { write: (chunk: string) => (err += chunk) },
    },
    process.env,
  );
  if (code !== 0) throw new Error(`admin ${argv.slice(0, 2).join(' ')} failed: ${err.trim()}`);
  return JSON.parse(out);
}

async function seed(request: SeedRequest): Promise<SeedResult> {
  const organization = await admin(['orgs', 'create', '--slug', request.organization, '--name', 'Benchmark']);
  const key = await admin([
    'keys',
    'create',
    '--org',
    request.organization,
    '--name',
    'bench',
    '--scopes',
    'full_access',
  ]);
  const assistants: Record<string, string> = {};
  const create = async (name: string, model: Record<string, unknown>) => {
    const created = await admin([
      'assistants',
      'create',
      '--org',
      request.organization,
      '--name',
      name,
      '--instructions',
      request.instructions,
      '--model-json',
      JSON.stringify(model),
    ]);
    assistants[name] = created.id;
  };
  for (const [name, model] of Object.entries(request.assistants)) {
    const settings = {
      provider: 'openai-compatible',
      baseUrl: request.upstreamBaseUrl,
      model,
      apiKeyEnv: 'BENCH_UPSTREAM_KEY',
      functionCalling: true,
    };
    await create(name, settings);
    if (!request.withFallbacks?.includes(name)) continue;
    await create(`${name}+fallbacks`, {
      ...settings,
      fallbacks: [
        { baseUrl: request.upstreamBaseUrl, model, apiKeyEnv: 'BENCH_UPSTREAM_KEY' },
        { baseUrl: request.upstreamBaseUrl, model: `${model}-fallback`, apiKeyEnv: 'BENCH_UPSTREAM_KEY' },
      ],
      failover: { continuation: true },
    });
  }

  const result: SeedResult = {
    organizationId: organization.id,
    apiKey: key.secret,
    assistants,
    memoryItems: 0,
  };
  if (request.memory) {
    const { memory } = request;
    const config = loadConfig({
      ...process.env,
      PORT: '0',
      QUICKSTART: 'false',
      MIGRATIONS_RUN_ON_BOOT: 'false',
    });
    const running = await createApp(config, { logger: false });
    try {
      const service = running.app.get(MemoryService, { strict: false });
      for (const item of memory.items) {
        const saved = await service.saveFromModel(
          organization.id,
          memory.userId,
          assistants[memory.assistant],
          item,
        );
        if (saved.saved) result.memoryItems++;
      }
    } catch (error) {
      result.memoryError = error instanceof Error ? error.message : String(error);
    } finally {
      await running.close();
    }
  }
  return result;
}

const request = JSON.parse(process.env.BENCH_SEED ?? '{}') as SeedRequest;
seed(request).then(
  (result) => {
    process.send?.({ type: 'seeded', result });
    process.disconnect?.();
  },
  (error: unknown) => {
    process.send?.({ type: 'seed-failed', message: error instanceof Error ? error.message : String(error) });
    process.disconnect?.();
    process.exitCode = 1;
  },
);
