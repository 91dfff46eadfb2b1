// Database work per turn statement of one build, counted on one backend (docs/benchmarks.md, round
// "dbcost"): shared-buffer hits and tuples (pg_stat_database of a database nothing else uses), WAL
// (pg_waldump, bench/wal-meter), the backend's CPU (schedstat), and whether the statements run as
// generic plans (pg_prepared_statements). The turns go through the build's own StartRecords and
// TurnStore on a pool of one connection. The database: migrated by that build, one organization and
// one assistant (ids read from it). `explain`: auto_explain (analyze, buffers, WAL) on that session.
// usage: [DATABASE_URL=<server>] node bench/turn-cost.mjs <worktree> <database> <op> <warm> <n> [explain]
// (after `npm run build && npx tsc -p bench/tsconfig.json` in <worktree>)
// A database:
//   createdb -h 127.0.0.1 -U postgres D && (cd <worktree> && DATABASE_URL=postgres://postgres@127.0.0.1:5432/D \
//     node dist/src/database/migrations.cli.js run) && psql -h 127.0.0.1 -U postgres -d D -c "INSERT INTO
//     organizations (id, slug, name) VALUES (gen_random_uuid(), 'bench', 'bench'); INSERT INTO assistants
//     (id, organization_id, name, model) SELECT gen_random_uuid(), id, 'a', '{}' FROM organizations"
//   then `node bench/turn-cost.mjs <worktree> D json-new 1500 1` for a bench-sized organization.
// ops: stream-new (turn_starts + turn_save, new conversation), json-new (turn_insert_new),
//      stream-cont (continuing: turn_starts + turn_save), json-cont (turn_insert), thread (thread_load
//      of a thread of THREAD_TURNS turns, 20 unless set, and the upstream body built from it as the
//      openai SDK does: JSON.stringify; its sha256 is printed, to compare builds)
// TURN_COST_SYNCS=1: also counts the backend's fdatasync calls over the measured turns (strace
// attached to it, as root; a pass of its own, as the trace slows the backend).
// STORY_CHARS: the length of each stored reply (1020 unless set; a bench thread's reply is ~120).
// Also printed: the harness process's CPU and V8-allocated bytes per op (the service's side of the
// statements: the driver's parsing of rows and, for `thread`, the transcript and the body).
import { Buffer } from 'node:buffer';
import { TextEncoder } from 'node:util';
import v8 from 'node:v8';
import { createRequire } from 'node:module';
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { URL } from 'node:url';
const [wt, db, op, warmArg, nArg, explain] = process.argv.slice(2);
const require = createRequire(`${wt}/package.json`);
require('reflect-metadata');
const pg = require('pg');
// Bytes of the turn statements' parameters, as the driver sends them (text; null sends none).
let paramBytes = 0;
const sendQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (config, ...rest) {
  if (config && typeof config === 'object' && Array.isArray(config.values))
    for (const value of config.values)
      if (value !== null && value !== undefined)
        paramBytes += Buffer.byteLength(value instanceof Date ? value.toISOString() : String(value));
  return sendQuery.call(this, config, ...rest);
};
const { DataSource } = require('typeorm');
const { StartRecords } = await import(`${wt}/dist/src/responses/store/start-records.js`);
const { TurnStore } = await import(`${wt}/dist/src/responses/store/turn-store.repository.js`);
const { openWalMeter } = await import(`${wt}/dist/bench/wal-meter.js`);
const { requestBody } = await import(`${wt}/dist/src/llm/openai-compatible.provider.js`);
// The server (a local Linux one: backends' CPU is read from /proc) and the database on it.
const server = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const url = Object.assign(new URL(server), { pathname: `/${db}` }).href;
const ds = new DataSource({ type: 'postgres', url, extra: { max: 1 } });
await ds.initialize();
const admin = new pg.Client({ connectionString: server });
await admin.connect();
const [ids] = await ds.query(
  `SELECT (SELECT id FROM organizations LIMIT 1) AS org, (SELECT id FROM assistants LIMIT 1) AS asst, pg_backend_pid() AS pid`,
);
const starts = new StartRecords(ds);
const store = new TurnStore(ds);
const story = 'Once upon a time '.repeat(60).slice(0, Number(process.env.STORY_CHARS ?? 1020));
const body = (id) =>
  JSON.stringify({
    id: `resp_${id}`,
    object: 'response',
    status: 'in_progress',
    model: 'm',
    output: [],
    usage: null,
    metadata: {},
  });
let lastBody = new Uint8Array();
const encoder = new TextEncoder();
let last = null; // a conversation to continue: { conversationId, responseId, depth }
function turn(continuing) {
  const responseId = randomUUID();
  const conversationId = continuing ? last.conversationId : randomUUID();
  const createdAt = new Date();
  const input = [{ role: 'user', content: [{ type: 'input_text', text: 'Tell me a story.' }] }];
  return {
    responseId,
    organizationId: ids.org,
    assistantId: ids.asst,
    conversationId,
    newConversationTitle: continuing ? null : 'Tell me a story.',
    previousResponseId: continuing ? last.responseId : null,
    userId: 'bench-user',
    status: 'in_progress',
    depth: continuing ? last.depth + 1 : 1,
    activeAgent: null,
    instructions: 'You are a helpful assistant.',
    input,
    createdAt,
    messages: [
      {
        id: randomUUID(),
        role: 'user',
        content: 'Tell me a story.',
        position: continuing ? last.depth * 2 : 0,
        createdAt,
      },
    ],
    transcript: [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: 'Tell me a story.' },
    ],
    background: false,
    newConversation: !continuing,
    continued: continuing ? { kind: 'response', id: last.responseId } : undefined,
    body: body(responseId),
    ownerId: 'harness',
    leaseMs: 30000,
  };
}
function finished(start, streamed = false) {
  const completedAt = new Date();
  return {
    ...start,
    status: 'completed',
    completedAt,
    messages: [
      ...(streamed ? [] : start.messages),
      {
        id: randomUUID(),
        role: 'assistant',
        content: story,
        position: start.messages[0].position + 1,
        createdAt: completedAt,
      },
    ],
    output: [
      {
        type: 'message',
        id: `msg_${start.responseId}`,
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: story, annotations: [] }],
      },
    ],
    outputText: story,
    transcript: [...start.transcript, { role: 'assistant', content: story }],
    usage: { input_tokens: 20, output_tokens: 200, total_tokens: 220 },
    error: null,
    body: JSON.stringify({
      id: `resp_${start.responseId}`,
      object: 'response',
      status: 'completed',
      output_text: story,
      usage: { input_tokens: 20, output_tokens: 200 },
    }),
    apiKeyId: '7d0c6a53-1f0e-4c36-9a59-6a3c2b1e0f11',
    usageRows: [
      {
        model: 'm',
        currency: 'USD',
        turns: 1,
        inputTokens: 20,
        cachedTokens: 0,
        outputTokens: 200,
        reasoningTokens: 0,
        cost: 0.001,
      },
    ],
  };
}
async function once() {
  const continuing = op.endsWith('-cont');
  if (op === 'thread') {
    const head = await store.loadThread(ids.org, ids.asst, 'bench-user', last.responseId);
    // The upstream request's body as OpenAiCompatibleProvider sends it: stringified by the SDK
    // from parsed messages and encoded by upstreamFetch, or (threadturn) written as bytes around the
    // stored text by requestBody.
    const system = { role: 'system', content: 'You are a helpful assistant.' };
    const now = { role: 'user', content: 'One more question.' };
    const params = (messages) => ({
      model: 'm',
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    lastBody = head.history
      ? requestBody(params([system, now]), { at: 1, stored: head.history })
      : encoder.encode(JSON.stringify(params([system, ...head.transcript, now])));
    return;
  }
  const start = turn(continuing && last !== null);
  if (op.startsWith('stream')) {
    await starts.record(start);
    // A recorded start's final write (TurnStore.completeTurn where the build has it).
    const end = finished(start, true);
    if (!(await (store.completeTurn ? store.completeTurn(end) : store.saveTurn(end))))
      throw new Error('not stored');
  } else {
    if ((await store.insertTurn(finished(start))) === false) throw new Error('not stored');
  }
  last = { conversationId: start.conversationId, responseId: start.responseId, depth: start.depth };
}
const schedNs = () => Number(readFileSync(`/proc/${ids.pid}/schedstat`, 'utf8').split(' ')[0]);
async function dbStats() {
  await ds.query('SELECT pg_stat_force_next_flush()');
  await new Promise((r) => setTimeout(r, 50));
  await admin.query('SELECT pg_stat_clear_snapshot()');
  const {
    rows: [r],
  } = await admin.query(
    'SELECT blks_hit, blks_read, tup_inserted, tup_updated, tup_fetched, tup_returned FROM pg_stat_database WHERE datname = $1',
    [db],
  );
  return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Number(v)]));
}
// For 'thread' and '-cont' ops, seed a conversation first.
const warm = Number(warmArg),
  n = Number(nArg);
if (op === 'thread') {
  // a thread of THREAD_TURNS turns (20 unless set) through json-cont turns
  const threadTurns = Number(process.env.THREAD_TURNS ?? 20);
  if (!Number.isInteger(threadTurns) || threadTurns < 1) throw new Error('THREAD_TURNS: a positive integer');
  for (let i = 0; i < threadTurns; i++) {
    const s = turn(last !== null);
    await store.insertTurn(finished(s));
    last = { conversationId: s.conversationId, responseId: s.responseId, depth: s.depth };
  }
}
for (let i = 0; i < warm; i++) await once();
if (explain) {
  await ds.query(`LOAD 'auto_explain'`);
  for (const s of [
    'auto_explain.log_min_duration = 0',
    'auto_explain.log_analyze = on',
    'auto_explain.log_buffers = on',
    'auto_explain.log_wal = on',
    'auto_explain.log_timing = off',
    "auto_explain.log_format = 'json'",
    'auto_explain.log_verbose = on',
    'auto_explain.log_triggers = on',
  ])
    await ds.query(`SET ${s}`);
  await ds.query(`SELECT 'harness-explain-start ${op}'`);
}
const syncs = process.env.TURN_COST_SYNCS === '1' ? await traceSyncs(ids.pid) : null;
const meter = (await openWalMeter(server, db)).meter;
const before = await dbStats();
const bytes0 = paramBytes;
const walStart = await meter.position();
const allocated = () => v8.getHeapStatistics().total_allocated_bytes ?? NaN;
const cpu0 = schedNs();
const own0 = process.cpuUsage();
const alloc0 = allocated();
const t0 = process.hrtime.bigint();
for (let i = 0; i < n; i++) await once();
const t1 = process.hrtime.bigint();
const fdatasyncs = syncs ? await syncs.stop() : undefined;
const alloc1 = allocated();
const own1 = process.cpuUsage(own0);
const cpu1 = schedNs();
const bytes1 = paramBytes;
const walEnd = await meter.position();
const after = await dbStats();
const wal = await meter.between(walStart, walEnd);
const plans = await ds.query(`SELECT name, generic_plans, custom_plans FROM pg_prepared_statements`);
const per = (v) => +(v / n).toFixed(2);
const out = {
  op,
  n,
  blks: Object.fromEntries(Object.keys(before).map((k) => [k, per(after[k] - before[k])])),
  wal: {
    records: per(wal.records),
    bytes: per(wal.bytes),
    fpiBytes: per(wal.fpiBytes),
    byRecord: Object.fromEntries(
      Object.entries(wal.byRecord).map(([k, v]) => [k, [per(v.records), per(v.bytes)]]),
    ),
    byRelation: Object.fromEntries(
      Object.entries(wal.byRelation).map(([k, v]) => [k, [per(v.records), per(v.bytes)]]),
    ),
  },
  paramBytes: per(bytes1 - bytes0),
  backendCpuMs: +((cpu1 - cpu0) / 1e6 / n).toFixed(3),
  ...(fdatasyncs === undefined ? {} : { backendFdatasyncs: per(fdatasyncs) }),
  wallMs: +(Number(t1 - t0) / 1e6 / n).toFixed(3),
  clientCpuMs: +((own1.user + own1.system) / 1e3 / n).toFixed(3),
  clientAllocatedBytes: Math.round((alloc1 - alloc0) / n),
  // The body's bytes differ by the stored text's spacing; the sha256 of its value re-encoded does not.
  ...(op === 'thread'
    ? {
        bodyBytes: lastBody.length,
        bodyValueSha256: createHash('sha256')
          .update(JSON.stringify(JSON.parse(Buffer.from(lastBody).toString('utf8'))))
          .digest('hex')
          .slice(0, 16),
      }
    : {}),
  plans: plans.map(
    (p) => `${p.name.replace(/_[0-9a-f]{8}_\d+$/, '')}: generic ${p.generic_plans}, custom ${p.custom_plans}`,
  ),
};
out.wal.byRecord = Object.entries(out.wal.byRecord)
  .map(([k, v]) => `${k} ${v[0]}/${v[1]}`)
  .join(', ');
out.wal.byRelation = Object.entries(out.wal.byRelation)
  .map(([k, v]) => `${k} ${v[0]}/${v[1]}`)
  .join(', ');
console.log(JSON.stringify(out));
await meter.close();
await admin.end();
starts.onModuleDestroy();
await ds.destroy();

/** strace on the backend, counting its fdatasync calls until `stop`. */
async function traceSyncs(pid) {
  const trace = spawn('strace', ['-f', '-e', 'trace=fdatasync', '-p', String(pid)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let text = '';
  trace.stderr.on('data', (chunk) => (text += chunk));
  while (!text.includes('attached')) await new Promise((r) => setTimeout(r, 10));
  const mark = text.length;
  return {
    stop: () =>
      new Promise((resolve) => {
        trace.on('close', () => resolve(text.slice(mark).split('fdatasync(').length - 1));
        trace.kill('SIGINT');
      }),
  };
}
