/**
 * The embedded database's thread: PGlite and its socket server run here, so executing a
 * statement never blocks the service's event loop. Started by pglite-host.ts from the compiled
 * dist/ only; the messages below are its whole interface.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { startPgliteServer } from './pglite-server.js';

export interface PgliteWorkerData {
  dataDir: string;
}

/** Sent to the worker: stop serving, close PGlite (flushing the data directory), then exit. */
export interface PgliteWorkerRequest {
  type: 'stop';
}

/** Sent by the worker: one of `started`/`failed` once, then `stopped`/`stop-failed` on request. */
export type PgliteWorkerReply =
  | { type: 'started'; url: string }
  | { type: 'failed'; message: string }
  | { type: 'stopped' }
  | { type: 'stop-failed'; message: string };

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

if (!parentPort) throw new Error('embedded-postgres.worker runs only as a worker thread');
const port = parentPort;
const reply = (message: PgliteWorkerReply) => port.postMessage(message);

try {
  const server = await startPgliteServer((workerData as PgliteWorkerData).dataDir);
  // `once`: with no listener left, the port no longer keeps the thread alive, so it exits on
  // its own once PGlite is closed.
  port.once('message', (_request: PgliteWorkerRequest) => {
    server.stop().then(
      () => reply({ type: 'stopped' }),
      (error: unknown) => reply({ type: 'stop-failed', message: messageOf(error) }),
    );
  });
  reply({ type: 'started', url: server.url });
} catch (error) {
  reply({ type: 'failed', message: messageOf(error) });
}
