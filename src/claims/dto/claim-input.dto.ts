import { ApiError } from '../../common/errors/error-catalogue.js';
import { MAX_USER_ID_LENGTH } from '../../common/http/request-params.js';

/**
 * Claim bodies and path parameters, parsed by hand: a claim value is any JSON (null included),
 * which class-validator cannot express, and the contract fixes which code each failure gets.
 */
export interface ClaimInput {
  userId: string;
  claimKey: string;
  claimValue: unknown;
}

/** Spec 8: measured on the serialized JSON, in UTF-8 bytes. */
export const MAX_CLAIM_VALUE_BYTES = 64 * 1024;
export const MAX_BULK_CLAIMS = 50;
const CLAIM_KEY = /^[A-Za-z0-9._:-]{1,128}$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function parseUserId(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_USER_ID_LENGTH) {
    throw new ApiError(
      'invalid_request',
      `${field} must be a string of 1 to ${MAX_USER_ID_LENGTH} characters`,
    );
  }
  return value;
}

export function parseClaimKey(value: unknown, field: string): string {
  if (typeof value !== 'string' || !CLAIM_KEY.test(value)) {
    throw new ApiError(
      'invalid_request',
      `${field} must be 1 to 128 characters of letters, digits, ".", "_", "-" or ":"`,
    );
  }
  return value;
}

/** One claim object, of POST /user-claims or one element of a bulk body (`where` prefixes messages). */
export function parseClaimInput(body: unknown, where = ''): ClaimInput {
  if (!isObject(body)) {
    throw new ApiError('invalid_request', `${where || 'The request body'} must be a JSON object`);
  }
  for (const field of ['userId', 'claimKey'] as const) {
    if (body[field] === undefined || body[field] === null) {
      throw new ApiError('missing_required_field', `Missing required field: ${where}${field}`);
    }
  }
  // JSON null is a legitimate claim value; only an absent field is missing.
  if (!('claimValue' in body) || body.claimValue === undefined) {
    throw new ApiError('missing_required_field', `Missing required field: ${where}claimValue`);
  }
  const userId = parseUserId(body.userId, `${where}userId`);
  const claimKey = parseClaimKey(body.claimKey, `${where}claimKey`);
  checkClaimValue(body.claimValue, `${where}claimValue`);
  return { userId, claimKey, claimValue: body.claimValue };
}

/** The bulk body `{claims: [...]}`: the count first, then every claim as if sent alone. */
export function parseBulkClaims(body: unknown): ClaimInput[] {
  if (!isObject(body)) throw new ApiError('invalid_request', 'The request body must be a JSON object');
  if (body.claims === undefined || body.claims === null) {
    throw new ApiError('missing_required_field', 'Missing required field: claims');
  }
  if (!Array.isArray(body.claims)) throw new ApiError('invalid_request', 'claims must be an array');
  if (body.claims.length > MAX_BULK_CLAIMS) {
    throw new ApiError(
      'bulk_limit_exceeded',
      `A bulk request holds at most ${MAX_BULK_CLAIMS} claims (got ${body.claims.length})`,
    );
  }
  const claims = body.claims.map((claim, index) => parseClaimInput(claim, `claims[${index}].`));
  // One statement cannot update the same row twice; a repeated pair is also almost surely a bug.
  const seen = new Map<string, number>();
  for (const [index, claim] of claims.entries()) {
    const pair = JSON.stringify([claim.userId, claim.claimKey]);
    const first = seen.get(pair);
    if (first !== undefined) {
      throw new ApiError(
        'invalid_request',
        `claims[${index}] repeats the userId and claimKey of claims[${first}]`,
      );
    }
    seen.set(pair, index);
  }
  return claims;
}

/**
 * The size limit (422). What JSONB cannot store (NUL, unpaired surrogates, deep nesting) never
 * gets here: the request edge refuses it for every body (src/common/http/storable-text.ts).
 */
function checkClaimValue(value: unknown, field: string): void {
  const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
  if (bytes > MAX_CLAIM_VALUE_BYTES) {
    throw new ApiError(
      'claim_value_too_large',
      `${field} is ${bytes} bytes serialized; the limit is ${MAX_CLAIM_VALUE_BYTES} bytes (64 KB)`,
    );
  }
}
