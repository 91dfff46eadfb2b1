import { monitorEventLoopDelay, performance, type EventLoopUtilization } from 'node:perf_hooks';
import { monitorPools } from './pool-monitor.js';
import { LOOP_RESOLUTION_MS, type LoopStats } from './results.js';

/**
 * Preloaded (`node --import`) into every measured server (service, bare relay, peer gateway) so
 * their event loops are measured the same way without touching their code. Over the IPC channel
 * the bench opens, `{type:'bench-loop', edge:'start'}` resets the delay histogram and the
 * utilisation baseline at the start of a measurement window; `edge:'end'` answers with the
 * window's figures (`LoopStats`). The delay histogram samples every 10 ms (Node's default, the
 * same as prom-client's lag metric); a sample is how late that timer fired, so the resolution is
 * subtracted. Servers with a node-postgres pool also report its waits (pool-monitor.ts).
 */
interface LoopMessage {
  type?: string;
  edge?: 'start' | 'end';
}

if (process.send) {
  const histogram = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  histogram.enable();
  const pools = monitorPools();
  let since: EventLoopUtilization = performance.eventLoopUtilization();
  const late = (nanoseconds: number) => Math.max(0, nanoseconds / 1e6 - LOOP_RESOLUTION_MS);
  process.on('message', (message: LoopMessage) => {
    if (message?.type !== 'bench-loop') return;
    if (message.edge === 'start') {
      histogram.reset();
      pools?.reset();
      since = performance.eventLoopUtilization();
      return;
    }
    const stats: LoopStats = {
      utilization: performance.eventLoopUtilization(since).utilization,
      delayP50Ms: late(histogram.percentile(50)),
      delayP99Ms: late(histogram.percentile(99)),
      delayMaxMs: late(histogram.max),
      samples: histogram.count,
      pool: pools?.read() ?? null,
    };
    process.send?.({ type: 'bench-loop-stats', stats });
  });
  // The channel must not keep a server alive that is shutting down.
  process.channel?.unref();
}
