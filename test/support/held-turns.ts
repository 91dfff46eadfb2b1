import { setTimeout as sleep } from 'node:timers/promises';
import { FakeUpstream } from './fake-upstream.js';
import { call, type ApiReply } from './http.js';
import { openStreamAtFirstDelta, parseSse, type StreamInFlight } from './sse.js';
import { startTestApp, type SeededOrganization, type TestApp } from './test-app.js';

/**
 * Turns of one conversation held mid-way by a real fake upstream, for the tests of what a turn's
 * final write does to its conversation when something happened to it meanwhile.
 */
export class HeldTurns {
  app!: TestApp;
  upstream!: FakeUpstream;
  org!: SeededOrganization;

  /**
   * No lease renewal during a test: a turn whose row is deleted is otherwise stopped at the next
   * one (docs/architecture.md), and here its final write is what is under test.
   */
  async start(slug: string): Promise<this> {
    this.upstream = await new FakeUpstream().start();
    this.app = await startTestApp({
      UPSTREAM_TEST_KEY: 'sk-test',
      UPSTREAM_STALL_TIMEOUT_MS: '60000',
      TURN_LEASE_SECONDS: '1200',
      TURN_LEASE_RENEW_MS: '600000',
      // Usage stays pending: a test reads it there.
      USAGE_FLUSH_MS: '60000',
    });
    this.org = await this.app.seedOrganization(slug, {
      provider: 'openai-compatible',
      baseUrl: this.upstream.url,
      model: 'held-model',
      apiKeyEnv: 'UPSTREAM_TEST_KEY',
    });
    return this;
  }

  async close(): Promise<void> {
    await this.app?.close();
    await this.upstream?.stop();
  }

  get model(): string {
    return `asst_${this.org.assistantId}`;
  }

  /** The next model call answers `text`, held before its finish reason until `release` is called. */
  heldReply(text: string): { release: () => void } {
    let release!: () => void;
    const ended = new Promise<void>((resolve) => (release = resolve));
    this.upstream.script({ text, resumeAfter: ended });
    return { release };
  }

  /**
   * `question A` in the conversation, as a JSON turn (`reply`: its answer) or a background one
   * (`reply`: the POST's), its model call made and its answer `answer A` held until `release`.
   */
  async heldTurn(
    user: string,
    conversation: string,
    background = false,
  ): Promise<{ release: () => void; reply: Promise<ApiReply> }> {
    const { release } = this.heldReply('answer A');
    const calls = this.upstream.requests.length;
    const reply = this.turn(user, {
      input: 'question A',
      conversation,
      ...(background ? { background } : {}),
    });
    await this.modelCalled(calls + 1);
    return { release, reply };
  }

  /** `question A` in the conversation as a streamed turn, open at its first delta, held as `heldTurn`'s. */
  async heldStream(
    user: string,
    conversation: string,
  ): Promise<{ release: () => void; id: string; stream: StreamInFlight }> {
    const { release } = this.heldReply('answer A');
    const calls = this.upstream.requests.length;
    const opened = await this.stream(user, { input: 'question A', conversation });
    await this.modelCalled(calls + 1);
    return { release, ...opened };
  }

  /** A JSON turn of the user `user`; `reply` is what the model answers. */
  turn(user: string, body: Record<string, unknown>, reply?: string): Promise<ApiReply> {
    if (reply !== undefined) this.upstream.script({ text: reply });
    return this.call(user, 'POST', '/v1/responses', { model: this.model, ...body });
  }

  /** A streamed turn of `user`, open at its first text delta; its response id. */
  async stream(user: string, body: Record<string, unknown>): Promise<{ id: string; stream: StreamInFlight }> {
    const stream = await openStreamAtFirstDelta(
      this.app.baseUrl,
      this.org.keys.full_access,
      this.model,
      body,
      {
        'x-user-id': user,
      },
    );
    return { id: parseSse(stream.raw()).events[0].json.response.id as string, stream };
  }

  call(user: string, method: string, path: string, body?: unknown): Promise<ApiReply> {
    return call(this.app.baseUrl, method, path, {
      key: this.org.keys.full_access,
      headers: { 'x-user-id': user },
      body,
    });
  }

  /** A new conversation of `user` with one finished turn; its id. */
  async conversation(user: string): Promise<string> {
    const first = await this.turn(user, { input: 'first question' }, 'first answer');
    expect(first.status).toBe(200);
    return first.body.conversation.id as string;
  }

  /** Waits until the model has been called `count` times in all. */
  async modelCalled(count: number): Promise<void> {
    await waitUntil(() => this.upstream.requests.length >= count, 'the model call');
  }

  /** The response once it no longer runs, polled as its user. */
  async finished(user: string, responseId: string): Promise<any> {
    let body: any;
    await waitUntil(async () => {
      const polled = await this.call(user, 'GET', `/v1/responses/${responseId}`);
      body = polled.body;
      return polled.status === 200 && !['queued', 'in_progress'].includes(body.status);
    }, 'the end of the turn');
    return body;
  }
}

/** Waits (bounded) until `condition` holds; the bound is only ever reached by a failing test. */
export async function waitUntil(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; !(await condition()); attempt++) {
    if (attempt > 500) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}
