import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The large values a turn writes: its response's JSON and text, its messages, its stored events. */
const COLUMNS: Record<string, string[]> = {
  response_event_batches: ['events'],
  messages: ['content'],
  responses: ['input', 'output', 'output_text', 'transcript', 'body', 'instructions', 'upstream_attempts'],
};

const alter = (method: string) =>
  Object.entries(COLUMNS)
    .map(
      ([table, columns]) =>
        `ALTER TABLE "${table}" ${columns.map((c) => `ALTER COLUMN "${c}" SET COMPRESSION ${method}`).join(', ')};`,
    )
    .join(' ');

/**
 * A turn's large values compressed with lz4 rather than pglz, PostgreSQL's default: pglz took
 * 3.1 % of a JSON turn's backend CPU, lz4 0.4 % (docs/benchmarks.md, round "pgperf"). Only new
 * values use it; nothing is rewritten. A server built without lz4 (the embedded database) keeps
 * pglz. SET COMPRESSION locks each table exclusively for an instant; behind a long transaction
 * that would queue every turn of the release still serving, so after 2 s of waiting the columns
 * keep pglz instead (an optimisation is not worth a stall; docs/deployment.md).
 */
export class TurnColumnsLz41796660000001 implements MigrationInterface {
  name = 'TurnColumnsLz41796660000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DO $$
      DECLARE previous text := current_setting('lock_timeout');
      BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_settings
                        WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
          RETURN;
        END IF;
        PERFORM set_config('lock_timeout', '2s', true);
        BEGIN
          ${alter('lz4')}
        EXCEPTION WHEN lock_not_available THEN
          RAISE NOTICE 'turn columns keep pglz: their tables stayed busy';
        END;
        PERFORM set_config('lock_timeout', previous, true);
      END $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(alter('default'));
  }
}
