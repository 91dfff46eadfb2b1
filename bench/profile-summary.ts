/**
 * Summarizes a V8 CPU profile: where the service's CPU went, by package or service folder and by
 * function (self time), plus the service's own functions by inclusive time, so a miss can be
 * traced to a file and function.
 */
interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
}

export interface ProfileLine {
  name: string;
  /** Share of the non-idle samples, in percent. */
  percent: number;
}

export interface ProfileSummary {
  /** Sampled busy CPU time, ms. */
  busyMs: number;
  /** Allocations over the same load, when the allocation profile was written. */
  allocations?: AllocationSummary;
  byArea: ProfileLine[];
  topSelf: ProfileLine[];
  topServiceInclusive: ProfileLine[];
}

/** Which package, service folder or runtime part a frame belongs to. */
export function areaOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (!url) {
    if (functionName === '(garbage collector)') return 'V8 garbage collector';
    if (functionName === '(program)') return 'V8/native (program)';
    if (/^write(v|Buffer|\w*String)$/.test(functionName)) return 'socket writes (native)';
    return `native ${functionName || '(anonymous)'}`;
  }
  const nodeModules = url.lastIndexOf('/node_modules/');
  if (nodeModules >= 0) {
    const rest = url.slice(nodeModules + '/node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const src = /\/dist\/src\/([^/]+)\//.exec(url) ?? /\/dist\/src\/([^/]+)\.js$/.exec(url);
  if (src) return `service src/${src[1]}`;
  if (url.startsWith('node:')) {
    const module = url
      .slice(5)
      .replace(/^internal\//, '')
      .split('/')[0];
    return `node:${module}`;
  }
  return url.split('/').slice(-2).join('/');
}

function frameName(frame: CallFrame): string {
  const file = frame.url
    ? frame.url
        .replace(/^file:\/\//, '')
        .replace(/^.*\/node_modules\//, '')
        .replace(/^.*\/dist\//, '')
    : '';
  return `${frame.functionName || '(anonymous)'}${file ? ` ${file}:${frame.lineNumber + 1}` : ''}`;
}

export function summarizeProfile(profile: CpuProfile, top = 15): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const totalSamples = profile.nodes.reduce((sum, node) => sum + (node.hitCount ?? 0), 0);
  const sampleMs = totalSamples > 0 ? (profile.endTime - profile.startTime) / 1000 / totalSamples : 0;
  const idle = profile.nodes
    .filter((node) => node.callFrame.functionName === '(idle)')
    .reduce((sum, node) => sum + (node.hitCount ?? 0), 0);
  const busy = Math.max(1, totalSamples - idle);

  const area = new Map<string, number>();
  const self = new Map<string, number>();
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0 || node.callFrame.functionName === '(idle)') continue;
    const areaName = areaOf(node.callFrame);
    area.set(areaName, (area.get(areaName) ?? 0) + hits);
    const name = frameName(node.callFrame);
    self.set(name, (self.get(name) ?? 0) + hits);
  }

  // Inclusive time of the service's own functions, each counted once per stack (recursion).
  const inclusive = new Map<string, number>();
  const root = profile.nodes[0];
  const visit = (node: ProfileNode, onStack: Set<string>): number => {
    let hits = node.callFrame.functionName === '(idle)' ? 0 : (node.hitCount ?? 0);
    const name = frameName(node.callFrame);
    const own = node.callFrame.url.includes('/dist/src/') && !onStack.has(name);
    if (own) onStack.add(name);
    for (const child of node.children ?? []) {
      const next = byId.get(child);
      if (next) hits += visit(next, onStack);
    }
    if (own) {
      onStack.delete(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + hits);
    }
    return hits;
  };
  if (root) visit(root, new Set());

  const lines = (map: Map<string, number>): ProfileLine[] =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, hits]) => ({ name, percent: (hits / busy) * 100 }));
  return {
    busyMs: busy * sampleMs,
    byArea: lines(area),
    topSelf: lines(self),
    topServiceInclusive: lines(inclusive),
  };
}

interface AllocationNode {
  callFrame: CallFrame;
  selfSize: number;
  children: AllocationNode[];
}

export interface AllocationSummary {
  /** Bytes allocated while sampling (objects freed since included). */
  totalBytes: number;
  /** Allocated bytes per turn of the load profiled; null when the turns are unknown. */
  bytesPerTurn: number | null;
  byArea: ProfileLine[];
  topSelf: ProfileLine[];
}

/** Where the service allocates (V8's sampling heap profiler): garbage is what costs GC time. */
export function summarizeAllocations(
  profile: { head: AllocationNode },
  turns: number,
  top = 15,
): AllocationSummary {
  const area = new Map<string, number>();
  const self = new Map<string, number>();
  let total = 0;
  const stack: AllocationNode[] = [profile.head];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.selfSize > 0) {
      total += node.selfSize;
      const areaName = areaOf(node.callFrame);
      area.set(areaName, (area.get(areaName) ?? 0) + node.selfSize);
      const name = frameName(node.callFrame);
      self.set(name, (self.get(name) ?? 0) + node.selfSize);
    }
    stack.push(...node.children);
  }
  const lines = (map: Map<string, number>): ProfileLine[] =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, bytes]) => ({ name, percent: total > 0 ? (bytes / total) * 100 : 0 }));
  return {
    totalBytes: total,
    bytesPerTurn: turns > 0 ? total / turns : null,
    byArea: lines(area),
    topSelf: lines(self),
  };
}
