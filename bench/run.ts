import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import * as prettier from 'prettier';
import { Bench } from './bench.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { cpuAccount, createBenchDatabase, machineInfo, otherShare, stolenShare } from './environment.js';
import { parseOptions, USAGE } from './options.js';
import { procReadable } from './processes.js';
import { evaluateTargets, mergeIntoDocument, renderMarkdown, renderPlot } from './report.js';
import type { BenchResults } from './results.js';

/**
 * `npm run bench`: one run on one machine. Starts the fake upstream, the service (built,
 * production mode, on a fresh database), the bare relay and the load generator, each in its own
 * process; runs every scenario against the upstream directly, the relay and the service,
 * interleaved; writes bench/results/<date>.json, docs/benchmarks.md and docs/benchmark-latency.svg.
 */
const PREAMBLE = `# Benchmarks

What Switchboard adds on top of the model, measured against a bare Node.js relay in the same run.
Run \`npm run bench\` (about 10 minutes; \`npm run bench -- --quick\` for a 2-minute smoke run).
`;

async function main(): Promise<number> {
  let options;
  try {
    options = parseOptions(process.argv.slice(2), process.env);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`);
    return 2;
  }
  if (!options) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (options.render) {
    const results = JSON.parse(await readFile(resolve(options.render), 'utf8')) as BenchResults;
    results.targets = evaluateTargets(results);
    await writeDocs(results);
    return 0;
  }
  if (process.platform !== 'linux' || !procReadable()) {
    process.stderr.write('The bench reads CPU time and memory from /proc: it runs on Linux only.\n');
    return 2;
  }
  const quiet = cpuAccount();
  await sleep(1000);
  const atStart = cpuAccount();
  const started = new Date();
  const resultsDir = resolve('bench/results', started.toISOString().replaceAll(':', '-').slice(0, 19));
  await mkdir(resultsDir, { recursive: true });
  const database = await createBenchDatabase(process.env.DATABASE_URL, options.keepDatabase);
  // The persisting relay stores its turns in the same PostgreSQL database as the service (its own
  // table); beside the embedded database it needs a server of its own (--relay-pg-url).
  const relayDatabase =
    database.kind === 'postgresql'
      ? database
      : options.relayPgUrl
        ? await createBenchDatabase(options.relayPgUrl, options.keepDatabase)
        : null;
  const command = [
    'npm run bench',
    ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : []),
  ].join(' ');
  process.stdout.write(`${command}: results in ${resultsDir}\n`);

  let results: BenchResults | undefined;
  let failure: unknown;
  let bench: Bench | undefined;
  try {
    bench = new Bench(options, database, resultsDir, relayDatabase);
    await bench.start();
    const scenarios = await bench.scenarios();
    const sweep = await bench.sweep();
    // Before the slow streams, which leave the heap large for a while.
    const soak = await bench.soak();
    const memory = await bench.slowStreams();
    const probe = await bench.probe();
    results = {
      startedAt: started.toISOString(),
      durationSeconds: (Date.now() - started.getTime()) / 1000,
      command,
      options,
      machine: machineInfo(database.version),
      serverNode: bench.serverNode,
      serviceAvailable: bench.serviceAvailable,
      peer: bench.peerInfo,
      otherLoad: {
        before: otherShare(quiet, atStart),
        during: 0,
        stolenBefore: stolenShare(quiet, atStart),
        stolenDuring: 0,
      },
      scenarios,
      sweep,
      memory,
      soak,
      statements: probe.statements,
      profiles: probe.profiles,
      targets: [],
      notes: bench.notes,
    };
    results.targets = evaluateTargets(results);
  } catch (error) {
    failure = error;
  } finally {
    await bench?.stop().catch(() => undefined);
    await database.drop().catch(() => undefined);
    if (relayDatabase && relayDatabase !== database) await relayDatabase.drop().catch(() => undefined);
  }
  // After stop(): every child has been reaped, so its CPU time is in this process's account.
  if (results) {
    const atEnd = cpuAccount();
    results.otherLoad.during = otherShare(atStart, atEnd);
    results.otherLoad.stolenDuring = stolenShare(atStart, atEnd);
  }
  if (!results) {
    process.stderr.write(`bench failed: ${failure instanceof Error ? failure.message : String(failure)}\n`);
    return 1;
  }

  await writeFile(join(resultsDir, 'results.json'), JSON.stringify(results, null, 2));
  await writeFile(resolve('bench/results/latest.json'), JSON.stringify(results, null, 2));
  if (options.writeDocs) await writeDocs(results);
  process.stdout.write('\nTargets:\n');
  for (const check of results.targets) {
    const verdict = check.pass === null ? 'not judged' : check.pass ? 'pass' : 'MISS';
    process.stdout.write(`  [${verdict}] ${check.target}: ${check.measured}\n`);
  }
  if (options.strict) {
    // The CI smoke: the bench must run end to end and every arm must answer; timing is never judged.
    const problems = strictProblems(results, bench?.excluded ?? []);
    for (const problem of problems) process.stderr.write(`bench smoke: ${problem}\n`);
    if (problems.length > 0) return 1;
    process.stdout.write('bench smoke: every arm answered every request\n');
  }
  return 0;
}

/** What makes a strict run fail: an arm missing, excluded or answering with errors. */
function strictProblems(results: BenchResults, excluded: string[]): string[] {
  const problems = excluded.map((entry) => `excluded after a failed check: ${entry}`);
  if (!results.serviceAvailable) problems.push('the service was not measured');
  if (results.options.peer && !results.peer) problems.push('the peer gateway was not measured');
  if (results.scenarios.length + results.sweep.length + results.memory.length === 0 && !results.soak)
    problems.push('nothing was measured');
  // Only the comparisons count: errors in the sweep and the held streams can be load, not breakage.
  for (const scenario of results.scenarios) {
    for (const [arm, result] of Object.entries(scenario.arms)) {
      const errors = Object.entries(result.errors);
      if (errors.length > 0)
        problems.push(
          `${scenario.key}, ${arm}: ${errors.map(([reason, count]) => `${count} × ${reason}`).join(', ')}`,
        );
      if (result.samples === 0) problems.push(`${scenario.key}, ${arm}: no samples`);
    }
  }
  return problems;
}

async function writeDocs(results: BenchResults): Promise<void> {
  const path = resolve('docs/benchmarks.md');
  const existing = await readFile(path, 'utf8').catch(() => null);
  const merged = mergeIntoDocument(existing, renderMarkdown(results), PREAMBLE);
  const config = (await prettier.resolveConfig(path)) ?? {};
  await writeFile(path, await prettier.format(merged, { ...config, filepath: path }));
  if (results.sweep.length > 0) await writeFile(resolve('docs/benchmark-latency.svg'), renderPlot(results));
  process.stdout.write(
    `wrote docs/benchmarks.md${results.sweep.length > 0 ? ' and docs/benchmark-latency.svg' : ''}\n`,
  );
}

process.exitCode = await main();
