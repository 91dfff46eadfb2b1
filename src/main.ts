import { createApp } from './bootstrap/create-app.js';
import { releaseBootMemory } from './common/runtime/boot-memory.js';
import { ConfigError, loadConfig } from './config/app-config.js';
import { exitGracefullyOnSignals } from './lifecycle/graceful-shutdown.js';
import { startBanner } from './quickstart/quickstart-banner.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const running = await createApp(config);
  releaseBootMemory();
  await running.app.listen(config.server.port, config.server.host);
  exitGracefullyOnSignals(running, config.lifecycle);
  const base = `http://localhost:${config.server.port}`;
  const where = running.database.embedded
    ? `embedded database in ${config.database.embeddedDataDir}`
    : 'PostgreSQL';
  process.stdout.write(
    startBanner({ base, where, embedded: running.database.embedded, quickstart: running.quickstart }),
  );
}

main().catch((error: unknown) => {
  const message =
    error instanceof ConfigError
      ? error.message
      : `Failed to start: ${error instanceof Error ? error.message : String(error)}`;
  process.stderr.write(message + '\n');
  process.exit(1);
});
