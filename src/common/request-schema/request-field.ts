import { ApiError, type ErrorCode } from '../errors/error-catalogue.js';

/** A JSON Schema (OpenAPI 3.1) fragment. */
export type JsonSchema = { [keyword: string]: unknown };

/**
 * One top-level field of a request body, described once: what it accepts (`schema`, for the
 * OpenAPI document), what it means (`description`, for the document and the docs' table), the
 * error a bad value gets (`error`) and how a present value is read (`parse`). The parser, the
 * OpenAPI request schema and the docs' parameter table are all derived from a list of these.
 */
export interface RequestField<N extends string = string, T = unknown> {
  readonly name: N;
  /** The schema of a sent value; absent and `null` are accepted unless `required`. */
  readonly schema: JsonSchema;
  readonly description: string;
  /** Absent or `null` is 400 `missing_required_field`, checked before any other field. */
  readonly required?: boolean;
  /** The error code(s) of a bad value (the catalogue's), the usual one first. */
  readonly error: ErrorCode | readonly ErrorCode[];
  /** Reads the field; `value` is `undefined` or `null` when it was not sent. Throws ApiError. */
  readonly parse: (value: unknown, body: Record<string, unknown>) => T;
}

/** A check across fields, run at its place in the list (so it keeps the contract's error order). */
export interface RequestRule {
  readonly rule: string;
  readonly check: (body: Record<string, unknown>) => void;
}

export type RequestStep = RequestField | RequestRule;

/** The checks of one request body, in the order the contract reports the first error (spec 7.3). */
export type RequestSteps = readonly RequestStep[];

export const isField = (step: RequestStep): step is RequestField => 'name' in step;

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function absent(value: unknown): value is null | undefined {
  return value === undefined || value === null;
}

export function refuse(message: string, code: ErrorCode = 'invalid_request'): never {
  throw new ApiError(code, message);
}

/**
 * Pulls the one server tool of a kind (`isKind` of its `type`) out of a request's `tools`, read by
 * `parse`; the rest are returned as they were. A second one is refused (`second` says why), at
 * its index, in the order of the list.
 */
export function takeOneTool<T>(
  tools: unknown,
  isKind: (type: string) => boolean,
  parse: (tool: Record<string, unknown>, path: string) => T,
  second: string,
): { taken: T | null; rest: unknown } {
  if (!Array.isArray(tools)) return { taken: null, rest: tools };
  let taken: T | null = null;
  const rest = tools.filter((tool, index) => {
    if (!isObject(tool) || typeof tool.type !== 'string' || !isKind(tool.type)) return true;
    if (taken !== null) refuse(`tools[${index}]: ${second}`);
    taken = parse(tool, `tools[${index}]`);
    return false;
  });
  return { taken, rest };
}

interface Described {
  description: string;
}

/** A field of one JSON type, described by `options`, whose bad value is 400 `invalid_request`. */
function typedField<N extends string, T>(
  name: N,
  schema: JsonSchema,
  options: Described,
  parse: (value: unknown) => T,
): RequestField<N, T> {
  return { name, schema, description: options.description, error: 'invalid_request', parse };
}

/** A number in [min, max]; `integer` also refuses fractions. */
export function numberField<N extends string>(
  name: N,
  min: number,
  max: number,
  options: Described & { integer?: boolean },
): RequestField<N, number | null> {
  return typedField(
    name,
    { type: options.integer ? 'integer' : 'number', minimum: min, maximum: max },
    options,
    (value) => {
      if (absent(value)) return null;
      if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
        refuse(`${name} must be a number from ${min} to ${max}`);
      }
      if (options.integer && !Number.isInteger(value))
        refuse(`${name} must be an integer from ${min} to ${max}`);
      return value;
    },
  );
}

export function booleanField<N extends string>(
  name: N,
  fallback: boolean,
  options: Described,
): RequestField<N, boolean> {
  return typedField(name, { type: 'boolean', default: fallback }, options, (value) => {
    if (absent(value)) return fallback;
    if (typeof value !== 'boolean') refuse(`${name} must be true or false`);
    return value;
  });
}

/** A string, at most `maxLength` characters when given. */
export function stringField<N extends string>(
  name: N,
  options: Described & { maxLength?: number },
): RequestField<N, string | null> {
  const { maxLength } = options;
  return typedField(
    name,
    { type: 'string', ...(maxLength === undefined ? {} : { maxLength }) },
    options,
    (value) => {
      if (absent(value)) return null;
      if (maxLength === undefined) {
        if (typeof value !== 'string') refuse(`${name} must be a string`);
      } else if (typeof value !== 'string' || value.length > maxLength) {
        refuse(`${name} must be a string of at most ${maxLength} characters`);
      }
      return value;
    },
  );
}

/** The message of a value outside `allowed`, for top-level fields and nested ones alike. */
export function oneOf<T extends string>(value: unknown, allowed: readonly T[], name: string): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    refuse(`${name} must be one of ${allowed.map((v) => `"${v}"`).join(', ')}`);
  }
  return value as T;
}

/** One of `values`; absent gives `fallback`. */
export function enumField<N extends string, T extends string, F extends T | null>(
  name: N,
  values: readonly T[],
  fallback: F,
  options: Described,
): RequestField<N, T | F> {
  return typedField(
    name,
    { type: 'string', enum: [...values], ...(fallback === null ? {} : { default: fallback }) },
    options,
    (value) => (absent(value) ? fallback : oneOf(value, values, name)),
  );
}

/** An object the service accepts without reading (its content changes nothing here). */
export function objectField<N extends string>(name: N, options: Described): RequestField<N, void> {
  return typedField(name, { type: 'object' }, options, (value) => {
    if (!absent(value) && !isObject(value)) refuse(`${name} must be an object`);
  });
}

/** A field of the Responses API refused by name whenever it is sent (only `null` passes). */
export function refusedField<N extends string>(
  name: N,
  message: string,
  options: Described,
): RequestField<N, void> {
  return typedField(name, { type: 'null' }, options, (value) => {
    if (!absent(value)) refuse(message);
  });
}

/** A field whose shape needs its own parser (input items, tools, `text`, …). */
export function customField<N extends string, T>(
  name: N,
  field: Omit<RequestField<N, T>, 'name'>,
): RequestField<N, T> {
  return { name, ...field };
}

/** The rule that refuses a field no step of the list names: `Unknown parameter: x`. */
export const KNOWN_FIELDS_ONLY: RequestRule = { rule: 'known fields only', check: () => undefined };
