import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A background turn's stream events stored one row per flush, not one per event
 * (docs/architecture.md, "Durable turns"): `events` is the flush's events as one JSON array, each
 * element the exact JSON text sent (a `json` column keeps the text as written), keyed by
 * `(response_id, first_sequence)`; `last_sequence` lets a resume skip the batches it has read.
 * No `created_at` index: retention follows the response's `completed_at`.
 *
 * Added beside `response_events`, not in its place: during a rolling upgrade the previous
 * release keeps writing and reading its per-event rows (docs/deployment.md, "Upgrades"), and
 * this release reads both. A later release drops `response_events`.
 */
export class ResponseEventBatches1796510000001 implements MigrationInterface {
  name = 'ResponseEventBatches1796510000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "response_event_batches" ("response_id" uuid NOT NULL, "first_sequence" integer NOT NULL, "last_sequence" integer NOT NULL, "events" json NOT NULL, CONSTRAINT "PK_3f20f94fc896dda1c31cf4a9f57" PRIMARY KEY ("response_id", "first_sequence"))',
    );
    await queryRunner.query(
      'ALTER TABLE "response_event_batches" ADD CONSTRAINT "FK_f62fa60e32485d40b06d0e9ae63" FOREIGN KEY ("response_id") REFERENCES "responses"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE "response_event_batches"');
  }
}
