import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import type { ValidationOptions, ValidatorOptions } from 'class-validator';
import { ApiError, type ErrorCode } from '../errors/error-catalogue.js';
import { nestedShapeErrors } from './nested-shape.js';

/**
 * The one validation pipe (registered globally in AppModule): class-validator DTOs, with
 * class-transformer building them, for the endpoints whose error order the contract leaves
 * open. Unknown fields and query parameters are refused by name, never silently dropped.
 *
 * A DTO says which catalogue code a rule fails with through the rule's `context`
 * (`failsWith`); a message may write `$path` for the full field path (`claims[2].claimValue`).
 * When several rules fail, a container's own failure comes before its members' (the bulk
 * wrapper before its claims), then the code earliest in PRECEDENCE, then the first field.
 */
const PRECEDENCE: readonly ErrorCode[] = [
  'bulk_limit_exceeded',
  'missing_required_field',
  'invalid_request',
  'claim_value_too_large',
];

/** Options for a class-validator rule: the code it fails with, and its message. */
export function failsWith(code: ErrorCode, message: ValidationOptions['message']): ValidationOptions {
  return { message, context: { code } };
}

interface Failure {
  code: ErrorCode;
  message: string;
  depth: number;
}

/** `claims` + `2` → `claims[2]`; `claims[2]` + `userId` → `claims[2].userId`. */
function join(parent: string, property: string): string {
  if (/^\d+$/.test(property)) return `${parent}[${property}]`;
  return parent ? `${parent}.${property}` : property;
}

function* failures(errors: readonly ValidationError[], parent: string, depth = 0): Generator<Failure> {
  for (const error of errors) {
    const path = join(parent, error.property ?? '');
    for (const [rule, message] of Object.entries(error.constraints ?? {})) {
      const code = (error.contexts?.[rule] as { code?: ErrorCode } | undefined)?.code ?? 'invalid_request';
      yield { code, message: describe(rule, message, path), depth };
    }
    yield* failures(error.children ?? [], path, depth + 1);
  }
}

/** Our rules name the path with `$path`; class-validator's own rules get our wording. */
function describe(rule: string, message: string, path: string): string {
  const field = path || 'The request body';
  if (rule === 'whitelistValidation') return `${field} is not a field or parameter this endpoint accepts`;
  if (rule === 'nestedValidation' || rule === 'unknownValue') {
    return `${field} must be a JSON object`;
  }
  return message.replaceAll('$path', field);
}

/** The failure a client is told about, as the envelope's error. */
export function validationFailure(errors: readonly ValidationError[]): ApiError {
  const rank = (code: ErrorCode) => {
    const index = PRECEDENCE.indexOf(code);
    return index === -1 ? PRECEDENCE.length : index;
  };
  let chosen: Failure | undefined;
  for (const failure of failures(errors, '')) {
    const before =
      chosen === undefined ||
      failure.depth < chosen.depth ||
      (failure.depth === chosen.depth && rank(failure.code) < rank(chosen.code));
    if (before) chosen = failure;
  }
  return new ApiError(chosen?.code ?? 'invalid_request', chosen?.message ?? 'The request is not valid');
}

export class ApiValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      forbidUnknownValues: true,
      transform: true,
      exceptionFactory: (errors) => validationFailure(errors),
    });
  }

  /** A body DTO describes an object: any other JSON (array, string, null) is refused as such. */
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && this.toValidate(metadata) && !isJsonObject(value)) {
      throw new ApiError('invalid_request', 'The request body must be a JSON object');
    }
    try {
      return await super.transform(value, metadata);
    } catch (error) {
      // class-transformer fails on objects it cannot rebuild (a "constructor" key that is not a
      // function) where a DTO expects a string: input of the wrong shape, not a server fault.
      if (error instanceof TypeError) {
        throw new ApiError('invalid_request', `A field of the request ${metadata.type} has the wrong type`);
      }
      throw error;
    }
  }

  /** class-validator's rules, then the shape of nested objects it lets through (see nested-shape.ts). */
  protected override async validate(object: object, options?: ValidatorOptions): Promise<ValidationError[]> {
    const errors = await super.validate(object, options);
    return errors.length > 0 ? errors : nestedShapeErrors(object);
  }

  /** Refused by name rather than silently removed, as Nest's pipe would (a claim value keeps all its keys). */
  protected override stripProtoKeys(value: unknown): void {
    const pending = [value];
    while (pending.length > 0) {
      const node = pending.pop();
      if (typeof node !== 'object' || node === null) continue;
      if (Object.hasOwn(node, '__proto__')) {
        throw new ApiError('invalid_request', 'The key "__proto__" is not accepted in a request');
      }
      for (const child of Object.values(node)) pending.push(child);
    }
  }
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
