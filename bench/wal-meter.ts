import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

/**
 * WAL written for one database between two points, read back with pg_waldump: the WAL position
 * is the whole cluster's (other databases on a shared server write too), so the records are
 * filtered by the bench database's OID and attributed to its tables and indexes; a transaction's
 * commit record counts when the transaction touched the bench database. Record bytes leave out
 * full-page images, which depend on when the last checkpoint was, not on the turn; those are
 * reported apart. Needs a local server whose data directory this user can read (the bench's
 * PostgreSQL on 127.0.0.1); otherwise `open` answers why not.
 */

export interface WalUsage {
  records: number;
  /** Record bytes without full-page images. */
  bytes: number;
  /** Bytes of full-page images (checkpoint-dependent). */
  fpiBytes: number;
  /** By relation (table, index, TOAST; "commit" for commit records), record bytes. */
  byRelation: Record<string, { records: number; bytes: number; fpiBytes: number }>;
  /** By record kind ("Heap INSERT", "Btree INSERT_LEAF", "Transaction COMMIT"). */
  byRecord: Record<string, { records: number; bytes: number }>;
}

export interface WalMeter {
  /** The current WAL write position (pg_lsn text). */
  position(): Promise<string>;
  /** What the bench database wrote between two positions. */
  between(start: string, end: string): Promise<WalUsage>;
  close(): Promise<void>;
}

const LINE =
  /^rmgr: (\S+)\s+len \(rec\/tot\):\s*(\d+)\/\s*(\d+), tx:\s*(\d+), lsn: \S+, prev \S+, desc: (\S+)(.*)$/;

export async function openWalMeter(
  serverUrl: string,
  database: string,
): Promise<{ meter: WalMeter } | { unavailable: string }> {
  const admin = new pg.Client({ connectionString: serverUrl });
  try {
    await admin.connect();
    const host = new URL(serverUrl).hostname;
    if (!['127.0.0.1', 'localhost', '::1'].includes(host))
      throw new Error(`the server (${host}) is not local`);
    const settings = await admin.query<{ dir: string; version: string; oid: number }>(
      "SELECT current_setting('data_directory') AS dir, current_setting('server_version_num') AS version, (SELECT oid FROM pg_database WHERE datname = $1) AS oid",
      [database],
    );
    const { dir, version, oid } = settings.rows[0];
    const waldump = [`/usr/lib/postgresql/${Math.floor(Number(version) / 10000)}/bin/pg_waldump`].find(
      (path) => existsSync(path),
    );
    if (!waldump) throw new Error('pg_waldump not found');
    readFileSync(join(dir, 'PG_VERSION'));
    const names = relationNames(serverUrl, database);
    const meter: WalMeter = {
      async position() {
        const row = await admin.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
        return row.rows[0].lsn;
      },
      async between(start, end) {
        const output = await dump(waldump, join(dir, 'pg_wal'), start, end);
        return attribute(output, String(oid), await names());
      },
      close: () => admin.end(),
    };
    return { meter };
  } catch (error) {
    await admin.end().catch(() => undefined);
    return { unavailable: error instanceof Error ? error.message : String(error) };
  }
}

/** relfilenode → relation name in the bench database (TOAST named after its table), re-read on demand. */
function relationNames(serverUrl: string, database: string): () => Promise<Map<string, string>> {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return async () => {
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    try {
      const rows = await client.query<{ node: string; name: string }>(
        `SELECT pg_relation_filenode(c.oid)::text AS node,
                CASE WHEN n.nspname = 'pg_toast'
                     THEN coalesce((SELECT 'TOAST of ' || t.relname FROM pg_class t
                                    WHERE t.reltoastrelid = c.oid
                                       OR t.reltoastrelid = (SELECT i.indrelid FROM pg_index i WHERE i.indexrelid = c.oid)),
                                   c.relname) || CASE WHEN c.relkind = 'i' THEN ' (index)' ELSE '' END
                     ELSE c.relname END AS name
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE pg_relation_filenode(c.oid) IS NOT NULL`,
      );
      return new Map(rows.rows.map((row) => [row.node, row.name]));
    } finally {
      await client.end();
    }
  };
}

function dump(waldump: string, walDir: string, start: string, end: string): Promise<string> {
  return new Promise((resolve) => {
    execFile(
      waldump,
      ['-p', walDir, '-s', start, '-e', end],
      { maxBuffer: 512 * 1024 * 1024, encoding: 'utf8' },
      // pg_waldump exits non-zero when the end position is the last record written: its output stands.
      (_error, stdout) => resolve(stdout ?? ''),
    );
  });
}

function attribute(output: string, databaseOid: string, names: Map<string, string>): WalUsage {
  const usage: WalUsage = { records: 0, bytes: 0, fpiBytes: 0, byRelation: {}, byRecord: {} };
  const ours = new Set<string>();
  const commits: { tx: string; kind: string; rec: number; tot: number }[] = [];
  const add = (relation: string, kind: string, rec: number, tot: number) => {
    usage.records++;
    usage.bytes += rec;
    usage.fpiBytes += tot - rec;
    const byRelation = (usage.byRelation[relation] ??= { records: 0, bytes: 0, fpiBytes: 0 });
    byRelation.records++;
    byRelation.bytes += rec;
    byRelation.fpiBytes += tot - rec;
    const byRecord = (usage.byRecord[kind] ??= { records: 0, bytes: 0 });
    byRecord.records++;
    byRecord.bytes += rec;
  };
  for (const line of output.split('\n')) {
    const match = LINE.exec(line);
    if (!match) continue;
    const [, rmgr, rec, tot, tx, desc, rest] = match;
    const kind = `${rmgr} ${desc.replace(/\+INIT$/, '')}`;
    if (rmgr === 'Transaction') {
      commits.push({ tx, kind, rec: Number(rec), tot: Number(tot) });
      continue;
    }
    const rel = /rel \d+\/(\d+)\/(\d+)/.exec(rest);
    if (!rel || rel[1] !== databaseOid) continue;
    if (tx !== '0') ours.add(tx);
    add(names.get(rel[2]) ?? `relfilenode ${rel[2]}`, kind, Number(rec), Number(tot));
  }
  for (const commit of commits) if (ours.has(commit.tx)) add('commit', commit.kind, commit.rec, commit.tot);
  return usage;
}
