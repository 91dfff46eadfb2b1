import type { AddressInfo } from 'node:net';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ApiKeysService } from '../../src/api-keys/api-keys.service.js';
import type { ApiKeyScope } from '../../src/api-keys/entities/api-key.entity.js';
import { AssistantsService } from '../../src/assistants/assistants.service.js';
import { createApp, type RunningApp } from '../../src/bootstrap/create-app.js';
import type { JsonLogger } from '../../src/common/logging/json-logger.js';
import { loadConfig, type AppConfig } from '../../src/config/app-config.js';
import { OrganizationsService } from '../../src/organizations/organizations.service.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

export interface TestApp {
  baseUrl: string;
  running: RunningApp;
  config: AppConfig;
  dataSource: DataSource;
  database: TestDatabase;
  /** Creates an organization with a key of each scope and an assistant on the offline model. */
  seedOrganization(slug: string, model?: unknown): Promise<SeededOrganization>;
  createKey(organizationId: string, scopes: ApiKeyScope[]): Promise<string>;
  close(): Promise<void>;
  /** Stops the service but keeps its database, to start it again with `reuse`. */
  stop(): Promise<void>;
}

export interface SeededOrganization {
  id: string;
  slug: string;
  assistantId: string;
  keys: Record<ApiKeyScope, string>;
}

/**
 * Boots the real service on a random loopback port with a database of its own (or `reuse`'s).
 * Its log lines are dropped unless a `logger` is given.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  options: { reuse?: TestDatabase; logger?: JsonLogger } = {},
): Promise<TestApp> {
  const database = options.reuse ?? (await createTestDatabase());
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    QUICKSTART: 'false',
    LOG_LEVEL: 'error',
    // Tests scrape /metrics without a token; test/security checks the closed default.
    METRICS_PUBLIC: 'true',
    ...database.env,
    ...env,
  });
  const running = await createApp(config, { logger: options.logger ?? false });
  await running.app.listen(0, '127.0.0.1');
  const { port } = running.app.getHttpServer().address() as AddressInfo;
  const createKey = async (organizationId: string, scopes: ApiKeyScope[]) =>
    (await running.app.get(ApiKeysService).create(organizationId, scopes.join('+'), scopes)).secret;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    running,
    config,
    database,
    dataSource: running.app.get<DataSource>(getDataSourceToken()),
    createKey,
    async seedOrganization(slug, model = { provider: 'offline' }) {
      const organization = await running.app.get(OrganizationsService).create({ slug });
      const assistant = await running.app
        .get(AssistantsService)
        .create(organization.id, { name: `${slug} assistant`, instructions: `You help ${slug}.`, model });
      return {
        id: organization.id,
        slug,
        assistantId: assistant.id,
        keys: {
          full_access: await createKey(organization.id, ['full_access']),
          assistant: await createKey(organization.id, ['assistant']),
          user: await createKey(organization.id, ['user']),
          admin: await createKey(organization.id, ['admin']),
        },
      };
    },
    async stop() {
      await running.close();
    },
    async close() {
      await running.close();
      await database.drop();
    },
  };
}
