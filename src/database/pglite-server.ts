import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PgliteWireServer } from './pglite-wire-server.js';

/** PGlite serving a data directory over the PostgreSQL wire protocol on a loopback port. */
export interface PgliteServer {
  url: string;
  /** Stops the socket server, then closes PGlite, which flushes the data directory. */
  stop(): Promise<void>;
}

/**
 * Opens a data directory with PGlite and serves it on 127.0.0.1 (a free port). The one place
 * that does this: the database worker runs it on its own thread, the in-thread fallback on the
 * caller's (see pglite-host.ts).
 */
export async function startPgliteServer(dataDir: string): Promise<PgliteServer> {
  // PGlite's build of pgvector, so the vector-index migration can create the extension and
  // search uses its HNSW index (docs/knowledge.md "Vector index"); loaded on every open, as a
  // data directory that has the extension needs its library.
  const db = await PGlite.create(dataDir, { extensions: { vector } });
  try {
    // One connection's protocol sequence or transaction at a time on PGlite's one session.
    const server = new PgliteWireServer(db, 32);
    const port = await server.listen();
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      stop: async () => {
        await server.stop();
        await db.close();
      },
    };
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
}
