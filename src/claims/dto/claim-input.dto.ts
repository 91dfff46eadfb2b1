import { applyDecorators } from '@nestjs/common';
import { Transform, Type } from 'class-transformer';
import {
  Allow,
  IsArray,
  IsDefined,
  IsString,
  Length,
  Matches,
  ValidateBy,
  ValidateNested,
  type ValidationArguments,
} from 'class-validator';
import { MAX_USER_ID_LENGTH } from '../../common/http/request-params.js';
import { failsWith } from '../../common/validation/validation.pipe.js';

/**
 * Claim bodies and path parameters, validated by the global pipe. What PostgreSQL cannot store
 * (NUL, lone surrogates, deep nesting) is refused for every request at the edge, not here.
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

const missing = failsWith('missing_required_field', 'Missing required field: $path');

const IsUserId = () => {
  const message = `$path must be a string of 1 to ${MAX_USER_ID_LENGTH} characters`;
  return applyDecorators(IsString({ message }), Length(1, MAX_USER_ID_LENGTH, { message }));
};

const IsClaimKey = () =>
  Matches(CLAIM_KEY, {
    message: '$path must be 1 to 128 characters of letters, digits, ".", "_", "-" or ":"',
  });

const bytes = (text: unknown) => Buffer.byteLength(String(text), 'utf8');

/** GET /user-claims/:userId */
export class UserClaimsParams {
  @IsUserId()
  userId!: string;
}

/** GET and DELETE /user-claims/:userId/:claimKey */
export class ClaimParams extends UserClaimsParams {
  @IsClaimKey()
  claimKey!: string;
}

/** POST /user-claims, and each element of a bulk body. */
export class ClaimInputDto {
  @IsDefined(missing)
  @IsUserId()
  userId!: string;

  @IsDefined(missing)
  @IsClaimKey()
  claimKey!: string;

  /**
   * Any JSON, null included (only an absent value is missing), held here as its JSON text, on
   * which the limit is measured. class-transformer must not rebuild the value: it trips over
   * keys such as "constructor". `@Type(() => Boolean)` makes its own pass a harmless
   * `Boolean(value)`; the text is then taken from the body as sent (`obj`).
   */
  @ValidateBy({ name: 'isPresent', validator: { validate: (text) => text !== undefined } }, missing)
  @ValidateBy(
    {
      name: 'maxSerializedBytes',
      validator: { validate: (text) => text === undefined || bytes(text) <= MAX_CLAIM_VALUE_BYTES },
    },
    failsWith(
      'claim_value_too_large',
      ({ value }: ValidationArguments) =>
        `$path is ${bytes(value)} bytes serialized; the limit is ${MAX_CLAIM_VALUE_BYTES} bytes (64 KB)`,
    ),
  )
  @Type(() => Boolean)
  @Transform(({ obj }: { obj: Record<string, unknown> }) =>
    obj.claimValue === undefined ? undefined : JSON.stringify(obj.claimValue),
  )
  claimValue?: string;

  /** Tolerated and ignored: the organization always comes from the API key. */
  @Allow()
  @Type(() => Boolean)
  organizationId?: unknown;
}

/** The claim a validated DTO describes. */
export function toClaimInput(dto: ClaimInputDto): ClaimInput {
  return { userId: dto.userId, claimKey: dto.claimKey, claimValue: JSON.parse(dto.claimValue!) };
}

/** The first repetition of a (userId, claimKey) pair in a bulk body: [index, first index]. */
function repeatedPair(claims: unknown): [number, number] | undefined {
  if (!Array.isArray(claims)) return undefined;
  const seen = new Map<string, number>();
  for (const [index, claim] of claims.entries()) {
    const { userId, claimKey } = (claim ?? {}) as Partial<ClaimInput>;
    if (typeof userId !== 'string' || typeof claimKey !== 'string') continue;
    const pair = JSON.stringify([userId, claimKey]);
    const first = seen.get(pair);
    if (first !== undefined) return [index, first];
    seen.set(pair, index);
  }
  return undefined;
}

/** POST /user-claims/bulk: `{claims: [...]}`, every claim validated as if sent alone. */
export class BulkClaimsDto {
  @IsDefined(missing)
  @IsArray({ message: '$path must be an array' })
  @ValidateBy(
    {
      name: 'maxBulkClaims',
      validator: { validate: (value) => !Array.isArray(value) || value.length <= MAX_BULK_CLAIMS },
    },
    failsWith(
      'bulk_limit_exceeded',
      ({ value }: ValidationArguments) =>
        `A bulk request holds at most ${MAX_BULK_CLAIMS} claims (got ${(value as unknown[]).length})`,
    ),
  )
  // One statement cannot update the same row twice; a repeated pair is also almost surely a bug.
  @ValidateBy(
    { name: 'noRepeatedClaim', validator: { validate: (value) => repeatedPair(value) === undefined } },
    {
      message: ({ value }: ValidationArguments) => {
        const [index, first] = repeatedPair(value)!;
        return `claims[${index}] repeats the userId and claimKey of claims[${first}]`;
      },
    },
  )
  @ValidateNested({ each: true })
  @Type(() => ClaimInputDto)
  claims!: ClaimInputDto[];
}
