import { Injectable } from '@nestjs/common';

/**
 * Where the boot is with the schema, for what runs by itself. Nest runs every
 * onApplicationBootstrap hook inside `app.init()`, before create-app migrates the database and
 * runs its one-time probes (it needs the built app for both). So a background worker does not
 * start in that hook: it awaits `ready`. And a probe remembers its answer only once `migrated`,
 * so that nothing keeps what a schema still being migrated looked like.
 *
 * create-app marks both; a boot that fails before never does, and its workers never start.
 */
@Injectable()
export class SchemaReadiness {
  private phase: 'migrating' | 'migrated' | 'ready' = 'migrating';
  private release: () => void = () => undefined;
  /** Resolves once the schema is migrated and the boot's probes are done; never rejects. */
  readonly ready = new Promise<void>((resolve) => (this.release = resolve));

  /**
   * True once this boot's migrations ran (or were left to the migrations CLI by
   * MIGRATIONS_RUN_ON_BOOT=false): the schema no longer changes under this process.
   */
  get migrated(): boolean {
    return this.phase !== 'migrating';
  }

  /** create-app, after the migrations. */
  markMigrated(): void {
    if (this.phase === 'migrating') this.phase = 'migrated';
  }

  /** create-app, after the probes: the background workers start. */
  markReady(): void {
    this.phase = 'ready';
    this.release();
  }
}
