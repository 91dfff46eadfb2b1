import { renameSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { writeHeapSnapshot } from 'node:v8';

/**
 * Preloaded into the service (`node --import`) when the bench profiles it. SIGUSR2 starts the V8
 * CPU and allocation sampling profilers, the next SIGUSR2 writes BENCH_CPU_PROFILE.<n>.heapprofile
 * and .cpuprofile (n = 1, 2, …), so each profile covers exactly one load the bench applied (`--cpu-prof` writes only at a clean
 * exit, which a signal-driven shutdown is not). SIGWINCH writes BENCH_CPU_PROFILE.<n>.memory.json
 * (process.memoryUsage after a full GC when exposed) and, with BENCH_HEAP_SNAPSHOTS=1, a heap
 * snapshot beside it, so memory per stream can be split into JS heap, buffers and the rest.
 */
const target = process.env.BENCH_CPU_PROFILE;
if (target) {
  const session = new Session();
  session.connect();
  let running = false;
  let count = 0;
  const write = (file: string, value: unknown) => {
    // Written aside and renamed, so the bench never reads half a file.
    writeFileSync(`${file}.partial`, JSON.stringify(value));
    renameSync(`${file}.partial`, file);
  };
  process.on('SIGUSR2', () => {
    if (!running) {
      running = true;
      session.post('Profiler.enable', () => session.post('Profiler.start'));
      // Every allocation, including what the next GC frees: garbage is what costs GC time.
      session.post('HeapProfiler.enable', () =>
        session.post('HeapProfiler.startSampling', {
          samplingInterval: 16384,
          includeObjectsCollectedByMajorGC: true,
          includeObjectsCollectedByMinorGC: true,
        }),
      );
      return;
    }
    running = false;
    const n = ++count;
    session.post('HeapProfiler.stopSampling', (error, result) => {
      if (!error) write(`${target}.${n}.heapprofile`, result.profile);
      // The CPU profile is written last: the bench waits for it, then reads both.
      session.post('Profiler.stop', (cpuError, cpu) => {
        if (!cpuError) write(`${target}.${n}.cpuprofile`, cpu.profile);
      });
    });
  });
}

if (target) {
  let snapshots = 0;
  process.on('SIGWINCH', () => {
    const n = ++snapshots;
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    const file = `${target}.${n}.memory.json`;
    if (process.env.BENCH_HEAP_SNAPSHOTS === '1') writeHeapSnapshot(`${target}.${n}.heapsnapshot`);
    writeFileSync(
      `${file}.partial`,
      JSON.stringify({ ...process.memoryUsage(), collected: gc !== undefined }),
    );
    renameSync(`${file}.partial`, file);
  });
}
