import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type GarbageCollect = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/**
 * Gives back the memory booting used and no longer needs, once, before the service listens.
 *
 * Booting allocates ~70 MiB (module sources, compiled code, Nest's metadata), which grows V8's
 * young generation to its maximum; V8 never shrinks it while the process stays idle (its memory
 * reducer waits for a low allocation rate, measured only at collections, so the boot's rate stands).
 * One memory-reducing collection here takes the young generation back to its minimum (it grows
 * again with traffic) and returns the freed pages: ~40 MiB of idle RSS on Node 26, ~25 on Node 20
 * (docs/benchmarks.md, "idle memory"). `gc` is taken from a fresh context, as jest's leak
 * detector does, and is never exposed to the application's global.
 */
export function releaseBootMemory(): void {
  const alreadyExposed = typeof (globalThis as { gc?: unknown }).gc === 'function';
  setFlagsFromString('--expose-gc');
  try {
    const gc = runInNewContext('gc') as unknown;
    if (typeof gc === 'function') {
      (gc as GarbageCollect)({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    }
  } finally {
    if (!alreadyExposed) setFlagsFromString('--no-expose-gc');
  }
}
