import { ApiKeysService } from '../src/api-keys/api-keys.service.js';
import { AssistantsService } from '../src/assistants/assistants.service.js';
import { OrganizationsService } from '../src/organizations/organizations.service.js';
import {
  buildService,
  withInProcessApp,
  startService,
  type ServiceBuild,
  type ServiceProcess,
} from './support/built-service.js';
import { call } from './support/http.js';
import { parseSse } from './support/sse.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

/** A turn the client saw completed: a JSON 200, or a stream that reached `response.completed`. */
interface SeenCompleted {
  id: string;
  outputText: string;
  conversationId: string;
  userId: string;
  replica: number;
}

const CLIENTS = 6;
const TURNS_PER_CLIENT = 10;

/**
 * Two replicas of the built service on one PostgreSQL database, turns driven round-robin, one
 * replica killed with SIGKILL mid-load (no shutdown sequence at all): every turn a client saw
 * completed must be readable from the survivor, with its chat history. A completed turn is stored
 * before the client hears of it, so a kill can only lose turns nobody was told about.
 */
(process.env.DATABASE_URL ? describe : describe.skip)(
  // The embedded database lives in the process that opened it: a kill -9 takes it along.
  'kill -9 of one of two replicas on PostgreSQL (needs DATABASE_URL; skipped on the embedded database)',
  () => {
    let database: TestDatabase;
    let build: ServiceBuild;
    let key: string;
    let assistantId: string;
    const replicas: ServiceProcess[] = [];

    beforeAll(async () => {
      database = await createTestDatabase();
      build = await buildService();
      await withInProcessApp(database, async (app) => {
        const organization = await app.get(OrganizationsService).create({ slug: 'kill' });
        // A few tokens 20 ms apart (streams are often mid-flight when the kill lands), naming the
        // input so that every turn's text is its own.
        const reply = 'About {{input}}: one two three four five six';
        assistantId = (
          await app.get(AssistantsService).create(organization.id, {
            name: 'kill',
            model: { provider: 'offline', tokenDelayMs: 20, script: [{ match: '.+', reply }] },
          })
        ).id;
        key = (await app.get(ApiKeysService).create(organization.id, 'k', ['full_access'])).secret;
      });
      for (let i = 0; i < 2; i++) replicas.push(await startService(build, database.env));
    }, 240_000);

    afterAll(async () => {
      for (const replica of replicas) if (replica.child.exitCode === null) replica.child.kill('SIGKILL');
      await Promise.all(replicas.map((replica) => replica.exit));
      await database?.drop();
      await build?.remove();
    });

    /** One turn on `replica`; resolves with what the client saw completed, or null. */
    async function turn(
      replica: number,
      userId: string,
      input: string,
      previous: string | null,
      stream: boolean,
    ): Promise<SeenCompleted | null> {
      try {
        const res = await fetch(`${replicas[replica].baseUrl}/v1/responses`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key, 'x-user-id': userId },
          body: JSON.stringify({ model: assistantId, input, previous_response_id: previous, stream }),
        });
        const text = await res.text();
        if (res.status !== 200) return null;
        let response: { id: string; output_text: string; conversation: { id: string }; status: string };
        if (stream) {
          const completed = parseSse(text).events.find((event) => event.json?.type === 'response.completed');
          if (!completed) return null;
          response = completed.json.response;
        } else {
          response = JSON.parse(text);
        }
        expect(response.status).toBe('completed');
        return {
          id: response.id,
          outputText: response.output_text,
          conversationId: response.conversation.id,
          userId,
          replica,
        };
      } catch {
        // The connection died with the replica: the client saw nothing completed.
        return null;
      }
    }

    it('every turn a client saw completed is readable from the surviving replica', async () => {
      const seen: SeenCompleted[] = [];
      let failedAfterKill = 0;
      let killed = false;
      const victim = replicas[0];

      const client = async (index: number) => {
        const userId = `user-${index}`;
        let previous: string | null = null;
        for (let n = 0; n < TURNS_PER_CLIENT; n++) {
          const replica = (index + n) % 2;
          const completed = await turn(
            replica,
            userId,
            `turn ${n} of client ${index}`,
            previous,
            n % 2 === 0,
          );
          if (completed) {
            seen.push(completed);
            previous = completed.id;
          } else if (killed) {
            failedAfterKill += 1;
          }
          // Kill once the load is well under way, while other clients' turns are in flight.
          if (!killed && seen.length >= CLIENTS * 2) {
            killed = true;
            victim.child.kill('SIGKILL');
          }
        }
      };
      await Promise.all(Array.from({ length: CLIENTS }, (_, index) => client(index)));
      await victim.exit;

      expect(killed).toBe(true);
      expect(victim.child.signalCode).toBe('SIGKILL');
      // The kill was felt: some turns were refused or cut, and the victim had completed some before.
      expect(failedAfterKill).toBeGreaterThan(0);
      expect(seen.some((turn) => turn.replica === 0)).toBe(true);
      expect(seen.length).toBeGreaterThan(CLIENTS * 2);

      const survivor = replicas[1].baseUrl;
      for (const completed of seen) {
        const read = await call(survivor, 'GET', `/v1/responses/${completed.id}`, {
          key,
          headers: { 'x-user-id': completed.userId },
        });
        expect(read.status).toBe(200);
        expect(read.body.status).toBe('completed');
        expect(read.body.output_text).toBe(completed.outputText);
      }
      for (const userId of new Set(seen.map((completed) => completed.userId))) {
        const mine = seen.filter((completed) => completed.userId === userId);
        for (const conversationId of new Set(mine.map((completed) => completed.conversationId))) {
          const history = await call(
            survivor,
            'GET',
            `/v1/chat/history/conversations/${conversationId}/messages`,
            { key, headers: { 'x-user-id': userId } },
          );
          expect(history.status).toBe(200);
          const texts = JSON.stringify(history.body);
          for (const completed of mine.filter((turn) => turn.conversationId === conversationId)) {
            expect(texts).toContain(completed.outputText);
          }
        }
      }
    }, 120_000);
  },
);
