import { QueryFailedError } from 'typeorm';

/** The SQLSTATE of a statement the database refused (TypeORM's QueryFailedError), if any. */
export function sqlState(error: unknown): string | undefined {
  if (!(error instanceof QueryFailedError)) return undefined;
  const code = (error.driverError as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Whether the database refused a row for a key it already holds. */
export function isUniqueViolation(error: unknown): boolean {
  return sqlState(error) === '23505';
}
