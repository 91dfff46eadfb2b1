import { renameSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

/**
 * Preloaded into the service (`node --import`) when the bench profiles it. The first SIGUSR2
 * starts the V8 sampling profiler, the second writes the profile to BENCH_CPU_PROFILE, so the
 * profile covers exactly the load the bench applied (`--cpu-prof` writes only at a clean exit,
 * which a signal-driven shutdown is not).
 */
const target = process.env.BENCH_CPU_PROFILE;
if (target) {
  const session = new Session();
  session.connect();
  let running = false;
  process.on('SIGUSR2', () => {
    if (!running) {
      running = true;
      session.post('Profiler.enable', () => session.post('Profiler.start'));
      return;
    }
    running = false;
    session.post('Profiler.stop', (error, result) => {
      if (error) return;
      // Written aside and renamed, so the bench never reads half a file.
      writeFileSync(`${target}.partial`, JSON.stringify(result.profile));
      renameSync(`${target}.partial`, target);
    });
  });
}
