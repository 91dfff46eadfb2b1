import {
  absent,
  isField,
  isObject,
  KNOWN_FIELDS_ONLY,
  refuse,
  type JsonSchema,
  type RequestField,
  type RequestSteps,
} from './request-field.js';

/** What a list of steps parses to: each field's name → what its `parse` returns. */
export type ParsedRequest<S extends RequestSteps> = {
  [F in Extract<S[number], RequestField> as F['name']]: ReturnType<F['parse']>;
};

export function fieldsOf(steps: RequestSteps): RequestField[] {
  return steps.filter(isField);
}

/** Each list of steps is a module constant: its fields and their names are found once, not per request. */
const shapes = new WeakMap<RequestSteps, { fields: RequestField[]; known: ReadonlySet<string> }>();

function shapeOf(steps: RequestSteps): { fields: RequestField[]; known: ReadonlySet<string> } {
  let shape = shapes.get(steps);
  if (shape === undefined) {
    const fields = fieldsOf(steps);
    shape = { fields, known: new Set(fields.map((field) => field.name)) };
    shapes.set(steps, shape);
  }
  return shape;
}

/**
 * Parses a request body by its steps: the body must be an object, then the required fields must be
 * present (in list order), then each step runs in list order, so the first error a client sees is
 * the one the contract names first.
 */
export function parseRequest<S extends RequestSteps>(steps: S, body: unknown): ParsedRequest<S> {
  if (!isObject(body)) refuse('The request body must be a JSON object');
  const { fields, known } = shapeOf(steps);
  for (const field of fields) {
    if (field.required && absent(body[field.name])) {
      refuse(`Missing required field: ${field.name}`, 'missing_required_field');
    }
  }
  const parsed: Record<string, unknown> = {};
  for (const step of steps) {
    if (isField(step)) {
      parsed[step.name] = step.parse(body[step.name], body);
    } else if (step === KNOWN_FIELDS_ONLY) {
      for (const key of Object.keys(body)) if (!known.has(key)) refuse(`Unknown parameter: ${key}`);
    } else {
      step.check(body);
    }
  }
  return parsed as ParsedRequest<S>;
}

/**
 * The OpenAPI schema of a request body with these steps: each field's schema and description,
 * `null` accepted beside an optional field's value (the parser reads it as absent).
 */
export function requestBodySchema(steps: RequestSteps, description: string): JsonSchema {
  const fields = fieldsOf(steps);
  const properties = Object.fromEntries(
    fields.map((field) => {
      const schema: JsonSchema = { ...field.schema, description: field.description };
      if (field.required || field.schema.type === 'null') return [field.name, schema];
      const { oneOf, ...rest } = schema;
      const branches = Array.isArray(oneOf) ? (oneOf as JsonSchema[]) : [field.schema];
      const outer = Array.isArray(oneOf) ? rest : { description: field.description };
      return [field.name, { ...outer, oneOf: [...branches, { type: 'null' }] }];
    }),
  );
  return {
    type: 'object',
    required: fields.filter((field) => field.required).map((field) => field.name),
    properties,
    ...(steps.includes(KNOWN_FIELDS_ONLY) ? { additionalProperties: false } : {}),
    description,
  };
}

/** How a schema reads in the docs' table: `number (0–2)`, `"auto" or "disabled"`, `array of InputItem`. */
export function typeText(schema: JsonSchema): string {
  if (Array.isArray(schema.oneOf)) return (schema.oneOf as JsonSchema[]).map(typeText).join(' or ');
  if (typeof schema.$ref === 'string') return schema.$ref.split('/').pop() ?? '';
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => `\`"${String(value)}"\``).join(', ');
  const type = typeof schema.type === 'string' ? schema.type : 'any';
  if (type === 'array') {
    const items = isObject(schema.items) ? ` of ${typeText(schema.items)}` : '';
    return `array${items}${limits(schema.minItems, schema.maxItems, 'items')}`;
  }
  if (type === 'number' || type === 'integer') return `${type}${range(schema.minimum, schema.maximum)}`;
  if (type === 'string') return `string${limits(schema.minLength, schema.maxLength, 'characters')}`;
  if (type === 'object') return `object${limits(undefined, schema.maxProperties, 'keys')}`;
  return type;
}

function range(min: unknown, max: unknown): string {
  if (typeof min === 'number' && typeof max === 'number') return ` (${min} to ${max})`;
  return typeof min === 'number' ? ` (≥ ${min})` : '';
}

function limits(min: unknown, max: unknown, unit: string): string {
  if (typeof max === 'number')
    return ` (${typeof min === 'number' ? `${min} to ` : 'at most '}${max} ${unit})`;
  if (min === 1) return ' (not empty)';
  return typeof min === 'number' ? ` (at least ${min} ${unit})` : '';
}

/** The docs' parameter table, cell by cell: field, type, default, error code, meaning. */
export function parameterRows(steps: RequestSteps): string[][] {
  return fieldsOf(steps).map((field) => [
    `\`${field.name}\``,
    field.required ? `${typeText(field.schema)}, required` : typeText(field.schema),
    field.schema.default === undefined ? '' : `\`${JSON.stringify(field.schema.default)}\``,
    (typeof field.error === 'string' ? [field.error] : field.error).map((code) => `\`${code}\``).join(', '),
    field.description,
  ]);
}
