import OpenAI, { toFile } from 'openai';
import { startTestApp, type TestApp } from './support/test-app.js';

/**
 * A small corpus with known answers: each question's answer is in exactly one document, often
 * in other words than the question's (inflections, word fragments, a few shared words only).
 * Hybrid search (the default) must rank the right document in the top 5 at least as often as
 * full-text search alone (`hybrid_search.embedding_weight: 0`).
 */
const CORPUS: Record<string, string> = {
  'vacation.md':
    'Employees accrue twenty-five vacation days per year. Unused leave carries over until March.',
  'expenses.md': 'Expense reports must be submitted within thirty days with itemised receipts attached.',
  'security.md': 'Laptops lock automatically after five minutes. Passwords rotate every ninety days.',
  'parking.md': 'Parking permits are renewed every January at the facilities desk on the ground floor.',
  'onboarding.md': 'New hires receive their badge and laptop on the first morning from the IT helpdesk.',
  'travel.md':
    'Business travellers book flights through the travel portal; economy class for trips under six hours.',
  'remote.md': 'Remote working is allowed up to three days a week with the approval of your manager.',
  'payroll.md': 'Salaries are paid on the twenty-eighth of each month by bank transfer.',
  'health.md':
    'The health insurance plan covers dental care and eyeglasses for employees and their children.',
  'kitchen.md': 'The kitchen fridge is emptied every Friday afternoon; label your food with your name.',
  'printing.md': 'Printers on every floor need a badge to release documents; colour printing is restricted.',
  'training.md':
    'Each employee has a yearly training budget of two thousand euros for courses and conferences.',
};

const QUESTIONS: Array<[string, string]> = [
  ['How many holidays do I get each year?', 'vacation.md'],
  ['When must I hand in my receipts for reimbursement?', 'expenses.md'],
  ['How often do passwords change?', 'security.md'],
  ['Where do I renew my car park permit?', 'parking.md'],
  ['What do newly hired people get on day one?', 'onboarding.md'],
  ['Can I fly business class?', 'travel.md'],
  ['How many days can I work from home?', 'remote.md'],
  ['Which day is salary paid?', 'payroll.md'],
  ['Does insurance pay for glasses?', 'health.md'],
  ['When is the fridge cleaned out?', 'kitchen.md'],
  ['Do I need my badge to print?', 'printing.md'],
  ['What is the budget for conferences?', 'training.md'],
  ['printer colour restrictions', 'printing.md'],
  ['unused vacation carry over', 'vacation.md'],
];

describe('retrieval quality', () => {
  let app: TestApp;
  let client: OpenAI;
  let storeId: string;

  beforeAll(async () => {
    app = await startTestApp({ VECTOR_STORE_INGEST_POLL_MS: '50' });
    const org = await app.seedOrganization('quality');
    client = new OpenAI({ apiKey: org.keys.user, baseURL: `${app.baseUrl}/v1`, maxRetries: 0 });
    const store = await client.vectorStores.create({ name: 'Policies' });
    storeId = store.id;
    const uploads = await Promise.all(
      Object.entries(CORPUS).map(async ([name, text]) =>
        client.files.create({ file: await toFile(Buffer.from(text), name), purpose: 'assistants' }),
      ),
    );
    await client.vectorStores.fileBatches.createAndPoll(
      store.id,
      { file_ids: uploads.map((file) => file.id) },
      { pollIntervalMs: 50 },
    );
  });
  afterAll(async () => {
    await app?.close();
  });

  /** How many questions find their document in the top 5 with these ranking options. */
  const hitsAt5 = async (ranking?: { embedding_weight: number; text_weight: number }): Promise<number> => {
    let hits = 0;
    for (const [question, answer] of QUESTIONS) {
      const page = await client.vectorStores.search(storeId, {
        query: question,
        max_num_results: 5,
        ...(ranking ? { ranking_options: { hybrid_search: ranking } as never } : {}),
      });
      if (page.data.some((result) => result.filename === answer)) hits += 1;
    }
    return hits;
  };

  it('ranks the right chunk in the top 5 with hybrid search at least as often as with full text alone', async () => {
    const lexical = await hitsAt5({ embedding_weight: 0, text_weight: 1 });
    const hybrid = await hitsAt5();
    expect(hybrid).toBeGreaterThanOrEqual(lexical);
    // And it is useful on its own: most questions find their answer.
    expect(hybrid).toBeGreaterThanOrEqual(Math.ceil(QUESTIONS.length * 0.75));
    console.log(`recall@5: hybrid ${hybrid}/${QUESTIONS.length}, lexical ${lexical}/${QUESTIONS.length}`);
  });
});
