import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { Logger } from '@nestjs/common';
import type { PgliteWorkerData, PgliteWorkerReply, PgliteWorkerRequest } from './embedded-postgres.worker.js';

/** Which thread executes the embedded database's statements. */
export type DatabaseThread = 'worker' | 'main';

export interface RunningPglite {
  url: string;
  thread: DatabaseThread;
  /** Stops serving and closes PGlite (flushing the data directory); rejects if it did not close cleanly. */
  stop(): Promise<void>;
}

/**
 * The compiled worker script beside this module. The service runs from dist/, where it exists.
 * Jest runs these TypeScript sources through @swc/jest, where it does not (and a Worker cannot
 * load a .ts file): there PGlite runs on the caller's thread. Both paths start the database
 * with `startPgliteServer`, so they differ only in the thread. `import.meta.url` is this
 * module's file URL in Node's ESM loader and under jest's VM modules alike.
 */
const WORKER_SCRIPT = new URL('./embedded-postgres.worker.js', import.meta.url);

/** How long the worker gets to confirm that PGlite closed; then it is terminated. */
const STOP_TIMEOUT_MS = 10_000;
/** How long a worker that confirmed the close gets to end its thread. */
const EXIT_TIMEOUT_MS = 2_000;

/** Starts PGlite on a data directory, in a worker thread whenever the compiled worker exists. */
export async function startPglite(dataDir: string): Promise<RunningPglite> {
  if (existsSync(fileURLToPath(WORKER_SCRIPT))) return PgliteWorker.start(dataDir);
  // Loaded only here: PGlite's JavaScript alone is ~7 MiB of a process's memory, which a service
  // on PostgreSQL (or one whose database runs in the worker) never needs on its own thread.
  const { startPgliteServer } = await import('./pglite-server.js');
  const server = await startPgliteServer(dataDir);
  return { url: server.url, thread: 'main', stop: () => server.stop() };
}

/** What the worker did next: replied, threw outside any handler, or ended. */
type WorkerEvent =
  PgliteWorkerReply | { type: 'crashed'; message: string } | { type: 'exited'; code: number };

class PgliteWorker implements RunningPglite {
  readonly thread = 'worker';
  private address = '';
  private readonly logger = new Logger('EmbeddedDatabase');
  private started = false;
  private stopping: Promise<void> | undefined;
  private exitCode: number | undefined;
  private lastError: string | undefined;
  private readonly exited: Promise<number>;

  private constructor(private readonly worker: Worker) {
    // From the first moment: without an 'error' listener, an exception in the worker would be
    // rethrown on this thread.
    worker.on('error', (error) => (this.lastError = error.message));
    this.exited = new Promise((resolve) =>
      worker.once('exit', (code) => {
        this.exitCode = code;
        if (this.started && !this.stopping) {
          // The service keeps running, but every statement fails from here on (readiness says so).
          this.logger.error({
            msg: 'embedded database worker exited unexpectedly',
            exitCode: code,
            error: this.lastError,
          });
        }
        resolve(code);
      }),
    );
  }

  get url(): string {
    return this.address;
  }

  static async start(dataDir: string): Promise<PgliteWorker> {
    const data: PgliteWorkerData = { dataDir };
    const worker = new Worker(WORKER_SCRIPT, { workerData: data, name: 'embedded-database' });
    const running = new PgliteWorker(worker);
    const event = await nextEvent(worker);
    if (event.type !== 'started') {
      await worker.terminate();
      throw new Error(describeEvent(event));
    }
    running.address = event.url;
    running.started = true;
    return running;
  }

  stop(): Promise<void> {
    this.stopping ??= this.shutDown();
    return this.stopping;
  }

  private async shutDown(): Promise<void> {
    if (this.exitCode !== undefined) return; // already gone, and logged when it happened
    const confirmation = nextEvent(this.worker);
    const request: PgliteWorkerRequest = { type: 'stop' };
    this.worker.postMessage(request);
    const event = await within(STOP_TIMEOUT_MS, confirmation);
    if (event?.type === 'stopped') {
      // PGlite is closed and flushed: a thread that lingers after that has nothing left to lose.
      if ((await within(EXIT_TIMEOUT_MS, this.exited)) === undefined) await this.worker.terminate();
      return;
    }
    await this.worker.terminate();
    throw new Error(
      event
        ? `the embedded database did not close cleanly: ${describeEvent(event)}`
        : `the embedded database did not close within ${STOP_TIMEOUT_MS / 1000} s; its thread was ` +
            'terminated, so its last writes may be lost',
    );
  }
}

/** The worker's next message, uncaught error or exit, whichever comes first. */
function nextEvent(worker: Worker): Promise<WorkerEvent> {
  return new Promise((resolve) => {
    const onMessage = (reply: PgliteWorkerReply) => settle(reply);
    const onError = (error: Error) => settle({ type: 'crashed', message: error.message });
    const onExit = (code: number) => settle({ type: 'exited', code });
    const settle = (event: WorkerEvent) => {
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      resolve(event);
    };
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
  });
}

function describeEvent(event: WorkerEvent): string {
  switch (event.type) {
    case 'failed':
    case 'stop-failed':
    case 'crashed':
      return event.message;
    case 'exited':
      return `its worker thread ended (exit code ${event.code})`;
    default:
      return `unexpected reply from its worker thread: ${event.type}`;
  }
}

async function within<T>(ms: number, promise: Promise<T>): Promise<T | undefined> {
  const timer = new AbortController();
  try {
    return await Promise.race([promise, sleep(ms, undefined, { signal: timer.signal })]);
  } finally {
    timer.abort();
  }
}
