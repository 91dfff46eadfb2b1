import type { TurnProgress } from '../turns/turn-plan.js';
import { DEFAULT_ECHO } from './turn-options.js';
import type { PreparedTurn } from './turn-preparer.js';
import { TurnRecording } from './turn-record.js';

/** The parts of a prepared turn a recording reads (a new conversation, one user message). */
function preparedTurn(reportModel?: 'upstream'): PreparedTurn {
  return {
    responseId: '00000000-0000-4000-8000-000000000001',
    createdAt: new Date('2026-11-29T09:00:00Z'),
    conversationId: '00000000-0000-4000-8000-000000000002',
    principal: { organizationId: '00000000-0000-4000-8000-000000000003', keyId: 'key' },
    assistant: {
      id: '00000000-0000-4000-8000-000000000004',
      model: { provider: 'openai-compatible', model: 'upstream-model', failover: { reportModel } },
    },
    request: {
      input: [{ type: 'message', role: 'user', text: 'Hi' }],
      conversationId: null,
      previousResponseId: null,
      instructions: null,
      options: { store: true },
    },
    params: { ...DEFAULT_ECHO, background: false },
    previous: null,
    user: { userId: 'user' },
    inputTranscript: [{ role: 'user', content: 'Hi' }],
  } as unknown as PreparedTurn;
}

const progress = (answeringModel: string | null) => ({ answeringModel }) as unknown as TurnProgress;
const noOutput = { output: [], outputText: '' };
const lease = { ownerId: 'replica', leaseMs: 30_000 };

describe('TurnRecording.running', () => {
  it("gives the start row's body text for the running Response while it is the same Response", () => {
    const recording = new TurnRecording(preparedTurn());
    const start = recording.start('in_progress', lease);
    const running = recording.running(noOutput, progress(null), 'in_progress');
    expect(running.json()).toBe(start.body);
    expect(running.json()).toBe(JSON.stringify(running.response));
  });

  it("serializes the running Response when its model is no longer the start row's", () => {
    const recording = new TurnRecording(preparedTurn('upstream'));
    const start = recording.start('in_progress', lease);
    const running = recording.running(noOutput, progress('fallback-model'), 'in_progress');
    expect(running.response.model).toBe('fallback-model');
    expect(running.json()).toBe(JSON.stringify(running.response));
    expect(running.json()).not.toBe(start.body);
  });

  it('serializes the running Response when the start row was queued, or never written', () => {
    const queued = new TurnRecording(preparedTurn());
    queued.start('queued', lease);
    const resumed = queued.running(noOutput, progress(null), 'in_progress');
    expect(JSON.parse(resumed.json())).toMatchObject({ status: 'in_progress' });
    expect(resumed.json()).toBe(JSON.stringify(resumed.response));
    const unstored = new TurnRecording(preparedTurn()).running(noOutput, progress(null), 'in_progress');
    expect(unstored.json()).toBe(JSON.stringify(unstored.response));
  });
});
