import type { ResolvedTarget } from './upstream-targets.js';

/**
 * The order a model call tries its targets in: pools (targets of the same model next to each
 * other: keys or deployments of one model) in declared order, each pool's members drawn by
 * weight without replacement, so the first attempts spread by weight and a failing member moves
 * the call to another member of its pool before the next model. With `busy` (least-busy
 * balancing) a pool's members go in order of the calls they are running, the weighted draw
 * breaking ties.
 */
export function targetOrder(
  targets: ResolvedTarget[],
  random: () => number = Math.random,
  busy?: (target: ResolvedTarget) => number,
): ResolvedTarget[] {
  const order: ResolvedTarget[] = [];
  let pool: ResolvedTarget[] = [];
  const flush = () => {
    const drawn = weightedShuffle(pool, random);
    if (busy && drawn.length > 1) {
      const running = new Map(drawn.map((target) => [target, busy(target)]));
      drawn.sort((a, b) => (running.get(a) ?? 0) - (running.get(b) ?? 0));
    }
    order.push(...drawn);
    pool = [];
  };
  for (const target of targets) {
    if (pool.length > 0 && pool[0].settings.model !== target.settings.model) flush();
    pool.push(target);
  }
  flush();
  return order;
}

function weightedShuffle(pool: ResolvedTarget[], random: () => number): ResolvedTarget[] {
  if (pool.length < 2) return pool;
  const left = [...pool];
  const drawn: ResolvedTarget[] = [];
  while (left.length > 0) {
    const total = left.reduce((sum, target) => sum + target.weight, 0);
    let point = random() * total;
    let index = 0;
    while (index < left.length - 1 && point >= left[index].weight) {
      point -= left[index].weight;
      index += 1;
    }
    drawn.push(...left.splice(index, 1));
  }
  return drawn;
}

/**
 * Healthy targets keep their order; targets whose breaker is open (or half-open with its probe
 * taken by another call) go to the back, in order: still tried when everything else failed, so
 * a breaker never turns a call away without an attempt.
 */
export function deferCooling<T>(order: T[], cooling: (target: T) => boolean): T[] {
  const healthy = order.filter((target) => !cooling(target));
  return healthy.length === order.length ? order : [...healthy, ...order.filter(cooling)];
}
