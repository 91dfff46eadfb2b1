import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

/** A table whose changes since its last VACUUM or ANALYZE passed autovacuum's thresholds. */
export interface DueTable {
  schema: string;
  table: string;
  /**
   * Dead tuples above the vacuum threshold, on a table without an HNSW index: VACUUM (ANALYZE);
   * otherwise ANALYZE only.
   */
  vacuum: boolean;
}

/**
 * PostgreSQL's default autovacuum thresholds (autovacuum_vacuum_threshold and _scale_factor,
 * autovacuum_analyze_threshold and _scale_factor), on the statistics PGlite keeps like a server
 * (pg_stat_user_tables, flushed about once a second) and the row estimate in pg_class (-1 before
 * the first pass: counted as 0, as autovacuum does). The most changed tables come first. A table
 * with an HNSW index (the vector store's chunks) is only analyzed: vacuuming an HNSW index
 * repairs its graph, slowly, and on PGlite every request would wait behind it.
 */
export const DUE_TABLES = `
  SELECT s.schemaname AS "schema", s.relname AS "table",
         s.n_dead_tup > 50 + 0.2 * greatest(c.reltuples, 0)
           AND NOT EXISTS (SELECT 1 FROM pg_index i
                             JOIN pg_class ic ON ic.oid = i.indexrelid
                             JOIN pg_am am ON am.oid = ic.relam
                            WHERE i.indrelid = s.relid AND am.amname = 'hnsw') AS "vacuum"
    FROM pg_stat_user_tables s
    JOIN pg_class c ON c.oid = s.relid
   WHERE s.n_dead_tup > 50 + 0.2 * greatest(c.reltuples, 0)
      OR s.n_mod_since_analyze > 50 + 0.1 * greatest(c.reltuples, 0)
   ORDER BY s.n_dead_tup + s.n_mod_since_analyze DESC`;

/** The embedded database's stand-in for autovacuum: which tables are due, and their pass. */
@Injectable()
export class TableMaintenance {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async dueTables(): Promise<DueTable[]> {
    return this.dataSource.query<DueTable[]>(DUE_TABLES);
  }

  /** VACUUM (ANALYZE) or ANALYZE of one table, outside any transaction (VACUUM needs that). */
  async maintain(due: DueTable): Promise<void> {
    const name = `${quoteIdentifier(due.schema)}.${quoteIdentifier(due.table)}`;
    await this.dataSource.query(due.vacuum ? `VACUUM (ANALYZE) ${name}` : `ANALYZE ${name}`);
  }
}

function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
