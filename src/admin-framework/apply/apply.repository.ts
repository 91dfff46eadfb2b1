import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/** Any fixed 64-bit number shared by every process: "switchboard apply". */
const APPLY_LOCK_KEY = 7_340_027_113_002;

@Injectable()
export class ApplyRepository {
  /**
   * Serializes `apply` runs (two CI pipelines at once) until the transaction ends: matching by
   * name would otherwise let both create the same assistant.
   */
  async lockForTransaction(manager: EntityManager): Promise<void> {
    await manager.query('SELECT pg_advisory_xact_lock($1)', [APPLY_LOCK_KEY]);
  }
}
