import type { JsonSchema } from './request-field.js';

/** The small builders of JSON Schema fragments shared by the request schema and the OpenAPI document. */
export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
export const nullable = (schema: JsonSchema): JsonSchema => ({ oneOf: [schema, { type: 'null' }] });
export const constant = (value: string): JsonSchema => ({ type: 'string', const: value });
/** An object whose listed properties are all required. */
export const object = (properties: Record<string, JsonSchema>, extra: JsonSchema = {}): JsonSchema => ({
  type: 'object',
  required: Object.keys(properties),
  properties,
  ...extra,
});

/** An object whose properties are all required but those named in `optional`. */
export const objectWithOptional = (
  properties: Record<string, JsonSchema>,
  optional: readonly string[],
  extra: JsonSchema = {},
): JsonSchema =>
  object(properties, {
    required: Object.keys(properties).filter((name) => !optional.includes(name)),
    ...extra,
  });
