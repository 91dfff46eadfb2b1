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
    });

    /**
     * One turn on `replica`: what the client saw completed, or why it saw nothing completed. Only
     * a connection that died (the replica killed under it) is caught; any other answer is kept
     * as the reason, for the test to judge.
     */
    async function turn(
      replica: number,
      userId: string,
      input: string,
      previous: string | null,
      stream: boolean,
    ): Promise<SeenCompleted | string> {
      let status: number;
      let text: string;
      try {
        const res = await fetch(`${replicas[replica].baseUrl}/v1/responses`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key, 'x-user-id': userId },
          body: JSON.stringify({ model: assistantId, input, previous_response_id: previous, stream }),
        });
        status = res.status;
        text = await res.text();
      } catch (error) {
        // The connection died with the replica: the client saw nothing completed.
        return `connection lost: ${(error as Error).message}`;
      }
      if (status !== 200) return `${status} ${text.slice(0, 300)}`;
      let response: { id: string; output_text: string; conversation: { id: string }; status: string };
      if (stream) {
        const completed = parseSse(text).events.find((event) => event.json?.type === 'response.completed');
        if (!completed) return `a stream without response.completed: ${text.slice(-300)}`;
        response = completed.json.response;
      } else {
        response = JSON.parse(text);
      }
      if (response.status !== 'completed') return `status ${response.status}`;
      return {
        id: response.id,
        outputText: response.output_text,
        conversationId: response.conversation.id,
        userId,
        replica,
      };
    }

    it('every turn a client saw completed is readable from the surviving replica', async () => {
      const seen: SeenCompleted[] = [];
      let failedAfterKill = 0;
      /** Turns that failed where nothing excuses it: before the kill, or on the survivor. */
      const unexcused: string[] = [];
      let survivorTurns = 0;
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
          if (replica === 1) survivorTurns += 1;
          if (typeof completed !== 'string') {
            seen.push(completed);
            previous = completed.id;
          } else if (killed && replica === 0) {
            failedAfterKill += 1;
          } else {
            unexcused.push(`client ${index} turn ${n} on replica ${replica}: ${completed}`);
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
      // Every turn before the kill, and every turn on the survivor, completed.
      expect(unexcused).toEqual([]);
      expect(seen.filter((turn) => turn.replica === 1)).toHaveLength(survivorTurns);
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
