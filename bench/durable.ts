import type http from 'node:http';
import { exchange, type ExchangeResult } from './http-client.js';
import type { Workload } from './load-protocol.js';

/**
 * Durable turns in the bench: the `background` workload (POST `background: true`, then resume
 * the stream at once on one or more replicas) and the second service instance of `resume-remote`,
 * which follows turns run by the measured one through the database (RESUME_POLL_MS).
 */

export type BackgroundWorkload = Extract<Workload, { kind: 'background' }>;

/** application_name of the second instance's connections, so its backends' CPU is told apart. */
export const REPLICA_APPLICATION = 'switchboard-bench-replica';

/** The service's defaults unless the bench's environment (passed on to the service) says otherwise. */
export function durableSettings(env: Record<string, string | undefined>): {
  pollMs: number;
  flushMs: number;
} {
  const read = (name: string, fallback: number) => Number(env[name] ?? fallback) || fallback;
  return { pollMs: read('RESUME_POLL_MS', 200), flushMs: read('BACKGROUND_EVENT_FLUSH_MS', 100) };
}

/** The same turn as `foreground` (a streamed Responses request), run in the background and followed. */
export function backgroundWorkload(
  foreground: Workload,
  followers: string[],
  startingAfter: number | null,
): BackgroundWorkload {
  if (foreground.kind !== 'single' || foreground.target.protocol !== 'responses')
    throw new Error('a background turn is a single Responses request');
  return {
    kind: 'background',
    target: foreground.target,
    body: { ...(foreground.body as Record<string, unknown>), stream: false, background: true },
    stream: true,
    expectTokens: foreground.expectTokens,
    followers,
    startingAfter,
  };
}

/**
 * One background turn from the bench process, keeping text and event types: the POST's answer
 * and each follower's stream (in the order of `workload.followers`), for the preflight checks.
 */
export async function followOnce(
  agent: http.Agent,
  workload: BackgroundWorkload,
): Promise<{ created: ExchangeResult; followers: ExchangeResult[] }> {
  const created = await exchange({
    agent,
    baseUrl: workload.target.baseUrl,
    path: workload.target.path,
    headers: workload.target.headers,
    body: JSON.stringify(workload.body),
    protocol: 'responses',
    stream: false,
    timeoutMs: 30_000,
    acceptStatuses: ['queued', 'in_progress'],
  });
  const id = created.response?.id;
  if (!created.ok || !id)
    return { created: { ...created, ok: false, error: created.error ?? 'no id' }, followers: [] };
  if (created.response?.status !== 'queued' && created.response?.status !== 'in_progress')
    return {
      created: { ...created, ok: false, error: `POST answered ${created.response?.status}` },
      followers: [],
    };
  const query = `?stream=true${workload.startingAfter === null ? '' : `&starting_after=${workload.startingAfter}`}`;
  const followers = await Promise.all(
    workload.followers.map((baseUrl) =>
      exchange({
        agent,
        baseUrl,
        path: `${workload.target.path}/${id}${query}`,
        headers: workload.target.headers,
        body: null,
        protocol: 'responses',
        stream: true,
        timeoutMs: 30_000,
        collectText: true,
      }),
    ),
  );
  return { created, followers };
}

/** What is wrong with a turn followed on two replicas, if anything: both must see the same events and text. */
export function compareFollowers(followers: ExchangeResult[], expectedText: string): string | undefined {
  for (const [index, follower] of followers.entries()) {
    const name = index === 0 ? 'the replica running it' : 'the other replica';
    if (!follower.ok) return `${name}: ${follower.error ?? 'failed'}`;
    if (follower.text !== expectedText)
      return `${name}: reply text differs (${JSON.stringify(follower.text?.slice(0, 40))}…)`;
    if (!follower.events?.includes('response.completed')) return `${name}: no response.completed`;
  }
  const [first, ...others] = followers;
  const differing = others.find((other) => other.events?.join() !== first.events?.join());
  return differing ? 'the replicas sent different events' : undefined;
}
