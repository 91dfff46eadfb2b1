import { Controller, Get, HttpCode, Res } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { Public } from '../auth/auth.decorators.js';
import { migrationsAreCurrent } from '../database/migration-runner.js';
import { LifecycleState } from '../lifecycle/lifecycle.state.js';

@Controller()
export class HealthController {
  private schemaCurrent = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly lifecycle: LifecycleState,
  ) {}

  /** Liveness: the process answers. */
  @Public()
  @Get('healthz')
  @HttpCode(200)
  alive(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Readiness: not shutting down, the database answers, and the schema is migrated. */
  @Public()
  @Get('readyz')
  async ready(
    @Res({ passthrough: true }) res: Response,
  ): Promise<{ status: string; checks: Record<string, boolean> }> {
    const checks = { accepting: !this.lifecycle.shuttingDown, database: false, migrations: false };
    try {
      await this.dataSource.query('SELECT 1');
      checks.database = true;
      this.schemaCurrent ||= await migrationsAreCurrent(this.dataSource);
      checks.migrations = this.schemaCurrent;
    } catch {
      // reported through the checks below
    }
    const ready = checks.accepting && checks.database && checks.migrations;
    res.status(ready ? 200 : 503);
    return { status: ready ? 'ready' : 'not_ready', checks };
  }
}
