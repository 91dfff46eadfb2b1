// What the embedded database's maintenance (src/database/embedded-maintenance.service.ts) costs
// and buys, on PGlite itself (no service): one-off wall-clock timings, so quote them with the
// machine's load. Build first (`npm run -s build`); needs a migrated embedded data directory to
// copy (the tests' template: ls -d $TMPDIR/switchboard-test-template-*/data).
//
//   node bench/embedded-maintenance.mjs <template-data-dir> cost 10000 100000
//     a table of N responses, each inserted then completed (one dead version per row, like a
//     turn): how long the due-tables query, VACUUM (ANALYZE) and ANALYZE take, and the sizes.
//   node bench/embedded-maintenance.mjs <template-data-dir> growth <batches> <turns-per-batch>
//     turns in batches (insert + complete each response, update its conversation), with no
//     maintenance or with a maintenance pass after each batch: table and data directory sizes.
import { execFileSync } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import pg from 'pg';

const { startPgliteServer } = await import('../dist/src/database/pglite-server.js');
const [template, mode, ...args] = process.argv.slice(2);

// The service's own due-tables query.
const { DUE_TABLES } = await import('../dist/src/database/table-maintenance.repository.js');

async function open() {
  const dir = await mkdtemp(join(tmpdir(), 'embedvac-'));
  await cp(template, join(dir, 'data'), { recursive: true });
  const server = await startPgliteServer(join(dir, 'data'));
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  // The rows are made here without organizations or assistants: foreign keys are not checked.
  await client.query(`SET session_replication_role = replica`);
  const close = async () => {
    await client.end();
    await server.stop();
    const bytes = Number(
      execFileSync('du', ['-sb', join(dir, 'data')])
        .toString()
        .split('\t')[0],
    );
    await rm(dir, { recursive: true, force: true });
    return bytes;
  };
  return { client, close };
}

const timed = async (work) => {
  const started = performance.now();
  await work();
  return Math.round(performance.now() - started);
};
const mib = (bytes) => (bytes / 2 ** 20).toFixed(1);

/** Statistics reach pg_stat_user_tables about once a second. */
async function settle(client) {
  await new Promise((resolve) => setTimeout(resolve, 1100));
  await client.query('SELECT 1');
}

/** `count` turns in `conversations` conversations: each response inserted, then completed. */
async function turns(client, count, conversations) {
  const { rows } = await client.query(
    `INSERT INTO conversations (id, organization_id, title, created_at, updated_at)
     SELECT gen_random_uuid(), '00000000-0000-0000-0000-000000000001', '', now(), now()
       FROM generate_series(1, $1) RETURNING id`,
    [conversations],
  );
  const ids = rows.map((row) => row.id);
  for (let done = 0; done < count; done += 10_000) {
    const batch = Math.min(10_000, count - done);
    await client.query(
      `INSERT INTO responses (id, organization_id, conversation_id, status, depth, input, output,
                              output_text, transcript, created_at)
       SELECT gen_random_uuid(), '00000000-0000-0000-0000-000000000001', ($2::uuid[])[1 + g % cardinality($2::uuid[])],
              'in_progress', g, '[{"role":"user","content":"hello"}]', '[]', '', '[]', now()
         FROM generate_series(1, $1) g`,
      [batch, ids],
    );
    await client.query(
      `UPDATE responses SET status = 'completed', completed_at = now(), output_text = 'Hello! How can I help?',
              output = '[{"type":"message","content":[{"type":"output_text","text":"Hello! How can I help?"}]}]'
        WHERE status = 'in_progress'`,
    );
  }
  // Each turn moves its conversation's head.
  for (let turn = 0; turn < count / conversations; turn++) {
    await client.query(`UPDATE conversations SET updated_at = now() WHERE id = ANY($1::uuid[])`, [ids]);
  }
}

async function maintain(client) {
  const due = (await client.query(DUE_TABLES)).rows;
  for (const table of due) {
    const name = [table.schema, table.table].map((part) => `"${part.replace(/"/g, '""')}"`).join('.');
    await client.query(`${table.vacuum ? 'VACUUM (ANALYZE)' : 'ANALYZE'} ${name}`);
  }
  return due.map((table) => `${table.table}${table.vacuum ? '(v)' : '(a)'}`);
}

const sizes = async (client) =>
  (
    await client.query(
      `SELECT relname, pg_total_relation_size(relid) AS bytes, n_dead_tup::int AS dead
         FROM pg_stat_user_tables WHERE relname IN ('responses', 'conversations') ORDER BY relname`,
    )
  ).rows.map((row) => `${row.relname} ${mib(row.bytes)} MiB (dead ${row.dead})`);

if (mode === 'cost') {
  for (const rows of args.map(Number)) {
    const { client, close } = await open();
    await turns(client, rows, Math.max(1, rows / 10));
    await settle(client);
    console.log(`${rows} responses: before: ${(await sizes(client)).join(', ')}`);
    const dueMs = await timed(() => client.query(DUE_TABLES));
    const analyzeMs = await timed(() => client.query('ANALYZE responses'));
    const vacuumMs = await timed(() => client.query('VACUUM (ANALYZE) responses'));
    const againMs = await timed(() => client.query('VACUUM (ANALYZE) responses'));
    await settle(client);
    console.log(
      `  due-tables query ${dueMs} ms; ANALYZE ${analyzeMs} ms; VACUUM (ANALYZE) ${vacuumMs} ms ` +
        `(again, nothing dead: ${againMs} ms); after: ${(await sizes(client)).join(', ')}`,
    );
    await close();
  }
} else if (mode === 'growth') {
  const [batches, perBatch] = args.map(Number);
  for (const withMaintenance of [false, true]) {
    const { client, close } = await open();
    let passMs = 0;
    for (let batch = 0; batch < batches; batch++) {
      await turns(client, perBatch, Math.max(1, perBatch / 10));
      if (withMaintenance) {
        await settle(client);
        passMs += await timed(() => maintain(client));
      }
    }
    await settle(client);
    const line = (await sizes(client)).join(', ');
    const dataDir = await close();
    console.log(
      `${withMaintenance ? 'a pass after each batch' : 'no maintenance'}: ${line}; data directory ` +
        `${mib(dataDir)} MiB${withMaintenance ? `; passes ${passMs} ms in all` : ''}`,
    );
  }
}
