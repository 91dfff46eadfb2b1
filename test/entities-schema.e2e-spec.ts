import { openTestDataSource, type TestDataSource } from './support/test-data-source.js';

/**
 * The entities describe exactly the schema the migrations build (what `npm run migration:generate`
 * checks): a change to an entity's columns, keys or indexes without its migration fails here, on
 * whichever database the suite runs against (embedded by default, a server with DATABASE_URL).
 */
describe('Entities and migrations', () => {
  let database: TestDataSource;

  beforeAll(async () => {
    database = await openTestDataSource();
  });

  afterAll(async () => {
    await database?.close();
  });

  it('the migrated schema needs no change to match the entities', async () => {
    const pending = await database.dataSource.driver.createSchemaBuilder().log();
    expect(pending.upQueries.map((query) => query.query)).toEqual([]);
  });
});
