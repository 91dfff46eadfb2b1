import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The large values a turn writes: its response's JSON and text, its messages, its stored events. */
const COLUMNS: Record<string, string[]> = {
  responses: ['input', 'output', 'output_text', 'transcript', 'body', 'instructions', 'upstream_attempts'],
  messages: ['content'],
  response_event_batches: ['events'],
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
 * 2.7 % of a JSON turn's backend CPU, lz4 0.5 % (docs/benchmarks.md, round "pgperf"). Only new
 * values use it; nothing is rewritten. A server built without lz4 (the embedded database) refuses
 * the method, and keeps pglz.
 */
export class TurnColumnsLz41796660000001 implements MigrationInterface {
  name = 'TurnColumnsLz41796660000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `DO $$ BEGIN ${alter('lz4')} EXCEPTION WHEN feature_not_supported THEN NULL; END $$`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(alter('default'));
  }
}
