import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { UpstreamAttempt } from '../llm/llm.types.js';

/** The upstream attempts stored with a turn (docs/resilience.md), read for the admin API. */
@Injectable()
export class UpstreamAttemptsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** A response of this organization, with its attempts; null when it is not the organization's. */
  async findForResponse(
    organizationId: string,
    responseId: string,
  ): Promise<{ status: string; attempts: UpstreamAttempt[] } | null> {
    const rows: { status: string; upstream_attempts: UpstreamAttempt[] | null }[] =
      await this.dataSource.query(
        'SELECT status, upstream_attempts FROM responses WHERE id = $1 AND organization_id = $2',
        [responseId, organizationId],
      );
    if (rows.length === 0) return null;
    return { status: rows[0].status, attempts: rows[0].upstream_attempts ?? [] };
  }
}
