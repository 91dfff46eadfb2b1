import { JsonLogger } from '../../src/common/logging/json-logger.js';

/** Keeps every line the service logs, as an operator would read it. */
export class CapturedLog extends JsonLogger {
  readonly lines: Record<string, unknown>[] = [];

  override log(message: unknown, context?: string): void {
    this.keep('log', message, context);
  }
  override warn(message: unknown, context?: string): void {
    this.keep('warn', message, context);
  }
  override error(message: unknown, ...rest: unknown[]): void {
    const context = rest.at(-1);
    this.keep('error', message, typeof context === 'string' ? context : undefined);
  }

  /** The warnings and errors, which a clean boot has none of. */
  get problems(): Record<string, unknown>[] {
    return this.lines.filter((line) => line.level !== 'log');
  }

  private keep(level: string, message: unknown, context: string | undefined): void {
    const fields = typeof message === 'object' && message !== null ? message : { msg: String(message) };
    this.lines.push({ level, context, ...fields });
  }
}
