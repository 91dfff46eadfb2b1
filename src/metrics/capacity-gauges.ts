import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Gauge } from 'prom-client';
import type { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Metrics } from './metrics.service.js';

/** The counters `pg.Pool` keeps; read at scrape time, never per request. */
interface PoolStats {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
  options: { max?: number };
}

/**
 * What this replica can take, for dashboards to set against what it takes: its in-flight cap
 * and its database pool (size, connections open and idle, requests waiting). Nothing reports
 * these; the pool's counters are read when Prometheus scrapes.
 */
@Injectable()
export class CapacityGauges {
  constructor(
    metrics: Metrics,
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectDataSource() dataSource: DataSource,
  ) {
    const inFlightLimit = new Gauge({
      name: 'switchboard_responses_in_flight_limit',
      help: 'The in-flight cap of this replica (MAX_IN_FLIGHT_RESPONSES)',
      registers: [],
    });
    inFlightLimit.set(config.limits.maxInFlightResponses);
    // TypeORM keeps the pg pool on the driver as `master`; absent before connect and after close.
    const pool = () => (dataSource.driver as unknown as { master?: PoolStats }).master;
    const poolMax = new Gauge({
      name: 'switchboard_db_pool_max',
      help: 'Size of the database connection pool',
      registers: [],
      collect() {
        this.set(pool()?.options.max ?? 0);
      },
    });
    const poolConnections = new Gauge({
      name: 'switchboard_db_pool_connections',
      help: 'Database pool connections: total open, idle, and requests waiting for one',
      labelNames: ['state'] as const,
      registers: [],
      collect() {
        const stats = pool();
        this.labels('total').set(stats?.totalCount ?? 0);
        this.labels('idle').set(stats?.idleCount ?? 0);
        this.labels('waiting').set(stats?.waitingCount ?? 0);
      },
    });
    for (const gauge of [inFlightLimit, poolMax, poolConnections]) metrics.registerCollector(gauge);
  }
}
