import { AssistantsService } from '../../src/assistants/assistants.service.js';
import { startTestApp, type SeededOrganization, type TestApp } from './test-app.js';

export interface TwoOrganizations {
  app: TestApp;
  /** `<prefix>-a`, which also has the second assistant. */
  orgA: SeededOrganization;
  /** `<prefix>-b`: the other side of every tenant boundary. */
  orgB: SeededOrganization;
  /** A second assistant of organization A (offline model). */
  secondAssistantId: string;
}

/** A fresh app with organizations `<prefix>-a` and `<prefix>-b`, and a second assistant in A. */
export async function startTwoOrganizations(
  prefix: string,
  secondAssistant = 'second',
): Promise<TwoOrganizations> {
  const app = await startTestApp();
  const orgA = await app.seedOrganization(`${prefix}-a`);
  const orgB = await app.seedOrganization(`${prefix}-b`);
  const { id: secondAssistantId } = await app.running.app
    .get(AssistantsService)
    .create(orgA.id, { name: secondAssistant, model: { provider: 'offline' } });
  return { app, orgA, orgB, secondAssistantId };
}
