import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { databaseOutage } from '../common/errors/database-outage.js';
import { requestContext } from '../common/logging/request-context.js';

/** How often an unavailable database is asked whether it is back. */
const PROBE_INTERVAL_MS = 1000;

/**
 * Ends an outage the exception filter reported: while the database is down, asks it once a second
 * whether it can take writes again, and then tells the tracker (which logs the recovery). Requests
 * need nothing from this: the pool opens fresh connections by itself once the server answers.
 */
@Injectable()
export class DatabaseOutageProbe implements OnModuleInit, OnModuleDestroy {
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  onModuleInit(): void {
    this.unsubscribe = databaseOutage.onOutage(() => this.schedule());
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.timer || !this.unsubscribe) return;
    // Outside the request that noticed the outage: the recovery line is not that request's.
    this.timer = requestContext.exit(() => setTimeout(() => void this.probe(), PROBE_INTERVAL_MS));
    this.timer.unref();
  }

  private async probe(): Promise<void> {
    let writable = false;
    try {
      // A read-only server (a standby during failover) answers, but cannot take a turn yet.
      const rows: { read_only: string }[] = await this.dataSource.query(
        `SELECT current_setting('transaction_read_only') AS read_only`,
      );
      writable = rows[0]?.read_only === 'off';
    } catch {
      // still down
    }
    this.timer = undefined;
    if (writable) databaseOutage.recovered();
    else if (databaseOutage.down) this.schedule();
  }
}
