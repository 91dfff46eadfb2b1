import { createApp } from './bootstrap/create-app.js';
import { ConfigError, loadConfig } from './config/app-config.js';
import { exitGracefullyOnSignals } from './lifecycle/graceful-shutdown.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const running = await createApp(config);
  await running.app.listen(config.server.port, config.server.host);
  exitGracefullyOnSignals(running, config.lifecycle);
  const base = `http://localhost:${config.server.port}`;
  const where = running.database.embedded
    ? `embedded database in ${config.database.embeddedDataDir}`
    : 'PostgreSQL';
  process.stdout.write(`Switchboard listening on ${base} (${where})\n`);
  if (running.quickstart) {
    const { apiKey, assistantId } = running.quickstart;
    process.stdout.write(
      [
        '',
        'Quickstart: a demo organization, assistant and key were created. The key is shown only this once.',
        `  API key:      ${apiKey}`,
        `  Assistant id: ${assistantId}`,
        '',
        'Try it:',
        `  curl -s ${base}/v1/responses -H 'x-api-key: ${apiKey}' -H 'content-type: application/json' \\`,
        `    -d '{"model":"${assistantId}","input":"hello"}'`,
        '',
      ].join('\n') + '\n',
    );
  }
}

main().catch((error: unknown) => {
  const message =
    error instanceof ConfigError
      ? error.message
      : `Failed to start: ${error instanceof Error ? error.message : String(error)}`;
  process.stderr.write(message + '\n');
  process.exit(1);
});
