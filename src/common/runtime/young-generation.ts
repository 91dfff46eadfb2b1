import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/** V8's own default: each growth of the young generation doubles it. */
const DEFAULT_GROWTH_FACTOR = 2;

const youngGenerationBytes = (): number =>
  getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;

/**
 * Keeps V8's young generation (both semi-spaces) at or below `maxMiB`, however the process was
 * started: `--max-semi-space-size` works only on the command line or in NODE_OPTIONS, which a
 * deployment may not pass (`node dist/src/main.js`, a harness of its own).
 *
 * V8 grows the young generation by doubling it after a scavenge that kept much alive, up to a
 * maximum it sizes from the machine (64 MiB with a 4 GiB heap limit). Under load it grows there
 * and stays: memory that holds only garbage between scavenges, ~50 MiB of a replica's RSS at
 * 1,000 open streams (docs/benchmarks.md, "streammem2"). The growth factor is read at each
 * growth, so after each collection it is set to 1 (no growth) once one more doubling would pass
 * the cap, and back to V8's default below it (V8 shrinks the young generation when allocation is
 * slow, and it may then grow again up to the cap). Returns a function that ends the cap.
 */
export function capYoungGeneration(maxMiB: number): () => void {
  const maxBytes = maxMiB * 1024 * 1024;
  let growing = true;
  const steer = (): void => {
    const grow = youngGenerationBytes() * 2 <= maxBytes;
    if (grow === growing) return;
    growing = grow;
    setFlagsFromString(`--semi-space-growth-factor=${grow ? DEFAULT_GROWTH_FACTOR : 1}`);
  };
  const observer = new PerformanceObserver(steer);
  observer.observe({ entryTypes: ['gc'] });
  steer();
  return () => {
    observer.disconnect();
    if (!growing) setFlagsFromString(`--semi-space-growth-factor=${DEFAULT_GROWTH_FACTOR}`);
    growing = true;
  };
}
