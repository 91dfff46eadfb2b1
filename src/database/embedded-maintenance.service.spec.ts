import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { databaseOutage } from '../common/errors/database-outage.js';
import { loadConfig } from '../config/app-config.js';
import { LifecycleState } from '../lifecycle/lifecycle.state.js';
import { EmbeddedMaintenance } from './embedded-maintenance.service.js';
import { SchemaReadiness } from './schema-readiness.js';
import type { DueTable, TableMaintenance } from './table-maintenance.repository.js';

/** A TableMaintenance whose passes the test holds and releases. */
class FakeTables {
  due: DueTable[] = [
    { schema: 'public', table: 'conversations', vacuum: true },
    { schema: 'public', table: 'responses', vacuum: false },
  ];
  readonly maintained: string[] = [];
  listings = 0;
  private release: (() => void) | undefined;
  failWith: Error | undefined;

  dueTables(): Promise<DueTable[]> {
    this.listings++;
    return Promise.resolve(this.due);
  }

  async maintain(due: DueTable): Promise<void> {
    await new Promise<void>((resolve) => (this.release = resolve));
    if (this.failWith) throw this.failWith;
    this.maintained.push(due.table);
  }

  /** Lets the table being maintained finish. */
  async finishOne(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    this.release?.();
    this.release = undefined;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function maintenance(tables: FakeTables, lifecycle = new LifecycleState()) {
  const config = loadConfig({ EMBEDDED_MAINTENANCE_SECONDS: '1' });
  return new EmbeddedMaintenance(
    tables as unknown as TableMaintenance,
    lifecycle,
    new SchemaReadiness(),
    config,
  );
}

describe('EmbeddedMaintenance', () => {
  beforeEach(() => jest.spyOn(Logger.prototype, 'debug').mockImplementation(() => undefined));
  afterEach(() => jest.restoreAllMocks());

  it('maintains the due tables one after the other, and never runs two passes at once', async () => {
    const tables = new FakeTables();
    const worker = maintenance(tables);
    const pass = worker.pass();
    const overlapping = worker.pass();
    await overlapping;
    await tables.finishOne();
    expect(tables.maintained).toEqual(['conversations']);
    await tables.finishOne();
    await pass;
    expect(tables.maintained).toEqual(['conversations', 'responses']);
    expect(tables.listings).toBe(1);
  });

  it('starts nothing once the replica is shutting down, and stops between tables', async () => {
    const tables = new FakeTables();
    const lifecycle = new LifecycleState();
    const worker = maintenance(tables, lifecycle);
    const pass = worker.pass();
    // The shutdown begins while the first table is being maintained: that one finishes.
    await new Promise((resolve) => setImmediate(resolve));
    lifecycle.beginShutdown();
    await tables.finishOne();
    await pass;
    expect(tables.maintained).toEqual(['conversations']);
    await worker.pass();
    expect(tables.listings).toBe(1);
  });

  it('logs a failure without its SQL, and the next pass runs', async () => {
    const tables = new FakeTables();
    tables.due = tables.due.slice(0, 1);
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const worker = maintenance(tables);
    tables.failWith = Object.assign(new Error('VACUUM (ANALYZE) "public"."conversations" failed'), {
      driverError: { code: '57014' },
    });
    const failed = worker.pass();
    await tables.finishOne();
    await failed;
    expect(warn).toHaveBeenCalledTimes(1);
    const line = warn.mock.calls[0][0] as Record<string, unknown>;
    expect(line).toMatchObject({ msg: 'embedded database maintenance failed', table: 'conversations' });
    expect(JSON.stringify(line)).not.toContain('VACUUM');
    tables.failWith = undefined;
    const next = worker.pass();
    await tables.finishOne();
    await next;
    expect(tables.maintained).toEqual(['conversations']);
  });

  it('leaves an outage to its tracker: no warning per pass, and no pass until it ends', async () => {
    const tables = new FakeTables();
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const worker = maintenance(tables);
    tables.failWith = Object.assign(new Error('Connection terminated unexpectedly'), {
      driverError: { code: 'ECONNRESET' },
    });
    try {
      const failed = worker.pass();
      await tables.finishOne();
      await failed;
      expect(databaseOutage.down).toBe(true);
      expect(warn).not.toHaveBeenCalled();
      await worker.pass();
      expect(tables.listings).toBe(1);
    } finally {
      databaseOutage.recovered();
    }
    tables.failWith = undefined;
    const next = worker.pass();
    await tables.finishOne();
    await tables.finishOne();
    await next;
    expect(tables.listings).toBe(2);
    expect(tables.maintained).toEqual(['conversations', 'responses']);
  });
});
