import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ResponseBody1795609207091 implements MigrationInterface {
  name = 'ResponseBody1795609207091';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "responses" ADD "body" json');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "responses" DROP COLUMN "body"');
  }
}
