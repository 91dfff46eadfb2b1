import type { BenchResults, StatementsResult } from './results.js';

/**
 * The database part of a run's report: statements, round trips, WAL and backend CPU per turn for
 * each kind of turn (the service and the persisting relay), then, per kind, every distinct
 * statement with its calls and rows per turn, and the WAL by table and index. Counts and WAL
 * bytes do not depend on the machine's load; CPU and the per-statement wall times do.
 */

const num = (value: number | null | undefined, digits = 2) =>
  value === null || value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits);

const server = (s: StatementsResult) => (s.arm === 'relayPg' ? 'relay-pg' : 'service');

/** A statement as a table cell: the name it was prepared under, then its text, shortened. */
function label(text: string, name: string | null): string {
  const short = text.length > 140 ? `${text.slice(0, 140)}…` : text;
  const code = `\`${short.replaceAll('`', "'").replaceAll('|', '\\|')}\``;
  return name ? `**${name}** ${code}` : code;
}

export function databaseSection(results: BenchResults): string[] {
  if (results.statements.length === 0) return [];
  const lines = [
    '### Database statements per turn',
    '',
    "Counted on the PostgreSQL wire protocol by a proxy in front of a second instance of each server (simple queries plus extended-protocol executes; round trips are syncs plus simple queries), turns one after another. WAL: what the bench database wrote meanwhile, read back with `pg_waldump` and filtered by the database (record bytes without full-page images, which depend on the checkpoint; commit records of its transactions included). Database CPU: its backends' time on the CPU (`/proc/<pid>/schedstat`), loaded machine.",
    '',
    '| Server | Turn | Statements | Round trips | By kind | WAL bytes (records) | Full-page images, bytes | Database CPU ms |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const s of results.statements) {
    const verbs = Object.entries(s.perTurn.byVerb)
      .sort((a, b) => b[1] - a[1])
      .map(([verb, count]) => `${verb} ${num(count, 1)}`)
      .join(', ');
    const wal = s.perTurn.wal;
    lines.push(
      `| ${server(s)} | ${s.kind} | ${num(s.perTurn.statements, 1)} | ${num(s.perTurn.roundTrips, 1)} | ${verbs} | ${wal ? `${Math.round(wal.bytes).toLocaleString('en-US')} (${num(wal.records, 1)})` : '–'} | ${wal ? Math.round(wal.fpiBytes).toLocaleString('en-US') : '–'} | ${num(s.perTurn.databaseCpuMs, 3)} |`,
    );
  }
  lines.push('');
  for (const s of results.statements) {
    const statements = Object.entries(s.perTurn.byStatement ?? {}).sort((a, b) => b[1].ms - a[1].ms);
    if (statements.length === 0) continue;
    lines.push(
      `#### ${server(s)}: ${s.kind}`,
      '',
      '| Statement | Calls/turn | Rows/turn | Wall ms/turn (loaded) |',
      '| --- | --- | --- | --- |',
      ...statements.map(
        ([text, stats]) =>
          `| ${label(text, stats.name)} | ${num(stats.calls, 2)} | ${num(stats.rows, 2)} | ${num(stats.ms, 3)} |`,
      ),
    );
    const wal = s.perTurn.wal;
    if (wal && wal.records > 0) {
      lines.push(
        '',
        `WAL per turn by relation: ${Object.entries(wal.byRelation)
          .sort((a, b) => b[1].bytes - a[1].bytes)
          .map(([relation, usage]) => `${relation} ${Math.round(usage.bytes)} B (${num(usage.records, 1)})`)
          .join(', ')}. By record: ${Object.entries(wal.byRecord)
          .sort((a, b) => b[1].bytes - a[1].bytes)
          .map(([kind, usage]) => `${kind} ${num(usage.records, 1)} × (${Math.round(usage.bytes)} B)`)
          .join(', ')}.`,
      );
    }
    lines.push('');
  }
  return lines;
}
