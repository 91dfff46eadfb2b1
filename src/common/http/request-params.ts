import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Matches, Max, Min, ValidateBy, ValidateIf } from 'class-validator';
import { ApiError } from '../errors/error-catalogue.js';

/**
 * The pieces the API's DTOs share: ids, the end-user header, the assistant filter, and keyset
 * pagination (`limit`, and an opaque `after` cursor the previous page returned).
 */

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The longest end-user id (`x-user-id`, a claim's `userId`) the API accepts. */
export const MAX_USER_ID_LENGTH = 256;

type Headers = Record<string, string | string[] | undefined>;

/** `<prefix><uuid>` (or, with `bareAllowed`, the UUID alone) → the bare lower-case UUID, or null. */
export function parsePrefixedUuid(raw: string, prefix: string, bareAllowed: boolean): string | null {
  const bare = raw.startsWith(prefix) ? raw.slice(prefix.length) : bareAllowed ? raw : '';
  return UUID.test(bare) ? bare.toLowerCase() : null;
}

/** For the endpoints where `x-user-id` is required: they always concern one end user. */
export function requireUserId(headers: Headers): string {
  const value = headers['x-user-id'];
  if (value === undefined) throw new ApiError('missing_required_field', 'Missing required header: x-user-id');
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_USER_ID_LENGTH) {
    throw new ApiError('invalid_request', `Header x-user-id must be 1 to ${MAX_USER_ID_LENGTH} characters`);
  }
  return value;
}

/** For the endpoints where `x-user-id` is optional: without it they reach anonymous data only. */
export function optionalUserId(headers: Headers): string | null {
  return headers['x-user-id'] === undefined ? null : requireUserId(headers);
}

/** `limit`: whole digits from 1 to `max`; `limit=1&limit=2` and anything else is a 400. */
export const PageLimit = (max: number) => {
  const message = `$path must be a whole number from 1 to ${max}`;
  return applyDecorators(
    Transform(({ value }: { value: unknown }) =>
      typeof value === 'string' && /^\d{1,5}$/.test(value) ? Number(value) : value,
    ),
    IsInt({ message }),
    Min(1, { message }),
    Max(max, { message }),
  );
};

/**
 * `after`: an opaque cursor, accepted only exactly as this endpoint issued it (the position it
 * decodes to re-encodes to the same text); the DTO holds the decoded position. An empty
 * `after` is no cursor.
 */
export const IssuedCursor = <Cursor>(format: CursorFormat<Cursor>) =>
  applyDecorators(
    Transform(({ value }: { value: unknown }) =>
      value === '' ? undefined : typeof value === 'string' ? decodeCursor(value, format) : null,
    ),
    ValidateIf((_dto: object, value: unknown) => value !== undefined),
    ValidateBy(
      { name: 'isIssuedCursor', validator: { validate: (value) => value !== null } },
      { message: '$path is not a cursor this endpoint returned' },
    ),
  );

/** A keyset page asked for: `limit` rows after the decoded `after` position (null: the first page). */
export interface PageQuery<Cursor> {
  limit: number;
  after: Cursor | null;
}

/** How one endpoint writes its positions as cursors: base64url of the parts, joined with `|`. */
export interface CursorFormat<Cursor> {
  parts(cursor: Cursor): (string | number)[];
  /** The position the parts name, or null when they are not of this endpoint's shape. */
  position(parts: string[]): Cursor | null;
}

export function encodeCursor<Cursor>(cursor: Cursor, format: CursorFormat<Cursor>): string {
  return Buffer.from(format.parts(cursor).join('|'), 'utf8').toString('base64url');
}

function decodeCursor<Cursor>(raw: string, format: CursorFormat<Cursor>): Cursor | null {
  if (!/^[A-Za-z0-9_-]{1,512}$/.test(raw)) return null;
  const position = format.position(Buffer.from(raw, 'base64url').toString('utf8').split('|'));
  return position !== null && encodeCursor(position, format) === raw ? position : null;
}

/** `assistant_id`: narrows to one assistant, as a bare UUID or `asst_<uuid>`; the DTO holds it bare. */
export class AssistantFilterQuery {
  @IsOptional()
  @Transform(({ value }: { value: unknown }) =>
    value === ''
      ? undefined
      : typeof value === 'string'
        ? (parsePrefixedUuid(value, 'asst_', true) ?? value)
        : value,
  )
  @Matches(UUID, { message: '$path must be an assistant UUID, bare or as asst_<uuid>' })
  assistant_id?: string;
}
