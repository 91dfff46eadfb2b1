import type { Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Logger, type INestApplication } from '@nestjs/common';
import { describeUnexpected } from '../common/errors/all-exceptions.filter.js';
import type { AppConfig } from '../config/app-config.js';
import { LifecycleState } from './lifecycle.state.js';

/** After the grace period, how long cut streams get to write `response.error` and close, and their rows to be stored. */
const FINAL_WRITE_MS = 2000;
/** Beyond delay + grace + this, the process exits anyway (before an orchestrator's SIGKILL). */
const WATCHDOG_SLACK_MS = 10_000;

/** What the sequence stops: the running service as createApp returns it. */
export interface StoppableApp {
  app: INestApplication<Server>;
  /** Stops the HTTP server, the pools and the embedded database. */
  close(): Promise<void>;
}

/**
 * The shutdown sequence:
 * 1. readiness turns false at once (requests are still served);
 * 2. after SHUTDOWN_DELAY_SECONDS the listener closes, idle keep-alive connections are closed,
 *    responses carry `Connection: close`, and new response requests get 503 service_overloaded;
 * 3. requests in flight, streams included, get SHUTDOWN_GRACE_SECONDS to finish;
 * 4. then `LifecycleState.drainDeadline` aborts: open streams end with `response.error`, and
 *    whatever is left after a short final window is disconnected;
 * 5. the rows of cut streams are written (bounded by the same final window);
 * 6. Nest closes (Redis, the database pool, the embedded database).
 */
export async function shutDownGracefully(
  running: StoppableApp,
  config: AppConfig['lifecycle'],
): Promise<void> {
  const logger = new Logger('Shutdown');
  const lifecycle = running.app.get(LifecycleState);
  const server: Server = running.app.getHttpServer();

  lifecycle.beginShutdown();
  logger.log({ msg: 'shutting down: readiness is now false', activeRequests: lifecycle.activeRequests });
  if (config.shutdownDelayMs > 0) await sleep(config.shutdownDelayMs);

  lifecycle.stopAccepting();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  logger.log({
    msg: 'listener closed: waiting for requests in flight',
    activeRequests: lifecycle.activeRequests,
  });
  const drained = lifecycle.whenIdle().then(() => {
    server.closeIdleConnections();
    return closed;
  });
  const graceTimer = new AbortController();
  const outcome = await Promise.race([
    drained.then(() => 'drained' as const),
    sleep(config.shutdownGraceMs, 'expired' as const, { signal: graceTimer.signal }),
  ]);
  graceTimer.abort();

  if (outcome === 'expired') {
    logger.warn({ msg: 'grace period over: ending open streams', activeRequests: lifecycle.activeRequests });
    lifecycle.expireGracePeriod();
    await Promise.race([lifecycle.whenIdle(), sleep(FINAL_WRITE_MS, undefined, { ref: false })]);
    server.closeAllConnections();
    await closed;
  }
  await Promise.race([lifecycle.whenWritesSettled(), sleep(FINAL_WRITE_MS, undefined, { ref: false })]);
  await running.close();
  logger.log({ msg: 'shut down cleanly' });
}

/**
 * SIGTERM (Kubernetes, Docker) and SIGINT (Ctrl-C) run the sequence once and exit 0; a second
 * signal exits at once with 1.
 */
export function exitGracefullyOnSignals(running: StoppableApp, config: AppConfig['lifecycle']): void {
  const logger = new Logger('Shutdown');
  let started = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (started) {
      logger.warn({ msg: 'second signal: exiting without waiting', signal });
      process.exit(1);
    }
    started = true;
    logger.log({ msg: 'signal received', signal });
    setTimeout(
      () => {
        logger.error({ msg: 'shutdown did not finish in time: exiting' });
        process.exit(1);
      },
      config.shutdownDelayMs + config.shutdownGraceMs + FINAL_WRITE_MS + WATCHDOG_SLACK_MS,
    ).unref();
    shutDownGracefully(running, config).then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ ...describeUnexpected(error), msg: 'shutdown failed' });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
