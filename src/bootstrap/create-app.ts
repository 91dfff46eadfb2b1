import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AppModule } from '../app.module.js';
import { JsonLogger } from '../common/logging/json-logger.js';
import { HttpObservability } from '../metrics/http-observability.js';
import { answerMalformedHttp } from '../common/http/client-error.js';
import { applyServerTimeouts } from '../common/http/server-timeouts.js';
import { RequestEdge } from '../common/http/request-edge.middleware.js';
import type { AppConfig } from '../config/app-config.js';
import { openDatabase, type DatabaseHandle } from '../database/embedded-postgres.js';
import { runMigrationsLocked } from '../database/migration-runner.js';
import { SchemaReadiness } from '../database/schema-readiness.js';
import { VectorIndexProbe } from '../vector-stores/vector-index/vector-index.probe.js';
import { packageVersion } from '../common/runtime/package-version.js';
import { isGatewayMessagePost } from '../mcp-gateway/gateway-message-body.js';
import { QuickstartService, type QuickstartCredentials } from '../quickstart/quickstart.service.js';

export interface RunningApp {
  app: NestExpressApplication;
  database: DatabaseHandle;
  quickstart: QuickstartCredentials | null;
  /** Stops the HTTP server, the pools and (when this process owns it) the embedded database. */
  close(): Promise<void>;
}

/**
 * Builds the whole service: locates the database (starting the embedded one if needed), wires
 * Nest, applies migrations under the advisory lock, seeds the quickstart data. Used by `main`
 * and by every end-to-end test, so tests boot exactly what users run.
 */
export async function createApp(
  config: AppConfig,
  options: { logger?: JsonLogger | false } = {},
): Promise<RunningApp> {
  const logger = options.logger ?? new JsonLogger(config.logging.level);
  const database = await openDatabase({
    ...config.database,
    role: 'service',
    onWait: (waitingFor) => {
      if (logger !== false) logger.warn({ msg: `embedded database held by ${waitingFor}; waiting for it` });
    },
  });
  if (database.thread && logger !== false) {
    logger.log({ msg: 'embedded database started', thread: database.thread });
  }
  // The OpenTelemetry SDK and its exporters (~5 MiB of heap) are loaded only when tracing is on.
  const tracing =
    config.tracing.enabled && config.tracing.endpoint !== undefined
      ? (await import('../common/tracing/tracing-sdk.js')).startTracing(config.tracing, packageVersion())
      : null;
  let app: NestExpressApplication | undefined;
  try {
    app = await NestFactory.create<NestExpressApplication>(
      AppModule.register(
        config,
        database,
        new RequestEdge(config.server.bodyLimitBytes, isGatewayMessagePost),
      ),
      {
        bodyParser: false,
        abortOnError: false,
        logger: logger === false ? false : logger,
      },
    );
    if (logger !== false) Logger.overrideLogger(logger);
    app.get(HttpObservability).useLogger(logger);
    app.set('trust proxy', config.server.trustProxy);
    app.disable('x-powered-by');
    // No ETag on API replies: no client does conditional requests on them (the spec defines none),
    // and Express would hash every JSON body to make one. The console sets its own (console-static).
    app.set('etag', false);
    // Request id, the text rule and body, and the rest of the request edge: AppModule.configure,
    // in order. What Node's HTTP parser refuses still gets the envelope:
    answerMalformedHttp(app.getHttpServer(), config.server);
    applyServerTimeouts(app.getHttpServer(), config.server);
    // No enableShutdownHooks(): main.ts runs the graceful sequence (src/lifecycle) on signals.
    // Runs the onApplicationBootstrap hooks; the background workers wait for `readiness`.
    await app.init();
    const readiness = app.get(SchemaReadiness);
    const dataSource = app.get<DataSource>(getDataSourceToken());
    if (config.database.runMigrationsOnBoot) await runMigrationsLocked(dataSource);
    readiness.markMigrated();
    // After the migrations: whether search uses pgvector's index depends on what they added.
    await app.get(VectorIndexProbe).detect();
    // Only now may the ingestion worker and the turn sweeper query: the schema is complete.
    readiness.markReady();
    const quickstart = await app.get(QuickstartService).seedIfEmpty();
    const running = app;
    return {
      app,
      database,
      quickstart,
      close: async () => {
        await running.close();
        await database.close();
        await tracing?.shutdown();
      },
    };
  } catch (error) {
    await app?.close().catch(() => undefined);
    await database.close();
    await tracing?.shutdown();
    throw error;
  }
}
