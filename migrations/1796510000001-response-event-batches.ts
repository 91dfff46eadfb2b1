import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A background turn's stream events stored one row per flush, not one per event
 * (docs/architecture.md, "Durable turns"): `events` is the flush's events as one JSON array, each
 * element the exact JSON text sent (a `json` column keeps the text as written), keyed by
 * `(response_id, first_sequence)`; `last_sequence` lets a resume skip the batches it has read.
 * No `created_at` index: retention follows the response's `completed_at`. The existing rows are
 * converted, one batch per response.
 */
export class ResponseEventBatches1796510000001 implements MigrationInterface {
  name = 'ResponseEventBatches1796510000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "response_event_batches" ("response_id" uuid NOT NULL, "first_sequence" integer NOT NULL, "last_sequence" integer NOT NULL, "events" json NOT NULL, CONSTRAINT "PK_37fbfabe20b6df1fe68ce0686df" PRIMARY KEY ("response_id", "first_sequence"))',
    );
    await queryRunner.query(
      `INSERT INTO "response_event_batches" ("response_id", "first_sequence", "last_sequence", "events")
       SELECT "response_id", min("sequence_number"), max("sequence_number"), json_agg("data"::json ORDER BY "sequence_number")
         FROM "response_events" GROUP BY "response_id"`,
    );
    await queryRunner.query('DROP TABLE "response_events"');
    await queryRunner.query('ALTER TABLE "response_event_batches" RENAME TO "response_events"');
    await queryRunner.query(
      'ALTER TABLE "response_events" ADD CONSTRAINT "FK_a4a5b350453e8f21b60ab62416d" FOREIGN KEY ("response_id") REFERENCES "responses"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "response_event_rows" ("response_id" uuid NOT NULL, "sequence_number" integer NOT NULL, "event_type" character varying(96) NOT NULL, "data" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_a390acf17fa7604aa47ba24ad73" PRIMARY KEY ("response_id", "sequence_number"))',
    );
    await queryRunner.query(
      `INSERT INTO "response_event_rows" ("response_id", "sequence_number", "event_type", "data")
       SELECT b."response_id", (e.value->>'sequence_number')::int, e.value->>'type', e.value::text
         FROM "response_events" b CROSS JOIN LATERAL json_array_elements(b."events") AS e(value)`,
    );
    await queryRunner.query('DROP TABLE "response_events"');
    await queryRunner.query('ALTER TABLE "response_event_rows" RENAME TO "response_events"');
    await queryRunner.query(
      'CREATE INDEX "IDX_response_events_created_at" ON "response_events" ("created_at")',
    );
    await queryRunner.query(
      'ALTER TABLE "response_events" ADD CONSTRAINT "FK_a4a5b350453e8f21b60ab62416d" FOREIGN KEY ("response_id") REFERENCES "responses"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }
}
