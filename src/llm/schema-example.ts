/**
 * A value that satisfies a JSON Schema, built without a model: the offline model answers
 * structured-output requests and forced function calls with it. Covers what Structured Outputs
 * and zod's JSON Schema export produce (objects, arrays, enums, const, anyOf/oneOf/allOf, $ref to
 * $defs, string formats and numeric bounds); `text` fills free-form strings.
 */
export function exampleFor(schema: unknown, text: string): unknown {
  return build(schema, { root: schema, text, depth: 0 });
}

interface Context {
  root: unknown;
  text: string;
  depth: number;
}

type Schema = Record<string, unknown>;

const MAX_DEPTH = 12;

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function build(raw: unknown, context: Context): unknown {
  if (!isSchema(raw)) return context.text;
  const schema = resolve(raw, context.root);
  const deeper = { ...context, depth: context.depth + 1 };
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const options = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  if (Array.isArray(options) && options.length > 0) {
    // Past the depth limit prefer a non-recursive branch (null, or a scalar) to end recursion.
    const pick =
      context.depth >= MAX_DEPTH
        ? (options.find((option) => isSchema(option) && option.type === 'null') ?? options[0])
        : (options.find((option) => !(isSchema(option) && option.type === 'null')) ?? options[0]);
    return build(pick, deeper);
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
    const merged = schema.allOf.reduce<Schema>(
      (all, part) => (isSchema(part) ? mergeSchemas(all, resolve(part, context.root)) : all),
      {},
    );
    return build(merged, deeper);
  }
  const type = pickType(schema);
  switch (type) {
    case 'object':
      return objectFor(schema, deeper);
    case 'array':
      return arrayFor(schema, deeper);
    case 'string':
      return stringFor(schema, context.text);
    case 'integer':
    case 'number':
      return numberFor(schema, type === 'integer');
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return context.text;
  }
}

function resolve(schema: Schema, root: unknown): Schema {
  let current = schema;
  for (let hops = 0; typeof current.$ref === 'string' && hops < 32; hops++) {
    const ref = current.$ref;
    if (!ref.startsWith('#')) return {};
    let target: unknown = root;
    for (const segment of ref.slice(1).split('/').filter(Boolean)) {
      const key = segment.replaceAll('~1', '/').replaceAll('~0', '~');
      target = isSchema(target) ? target[key] : undefined;
    }
    if (!isSchema(target)) return {};
    const { $ref: _ref, ...rest } = current;
    current = { ...target, ...rest };
  }
  return current;
}

function mergeSchemas(a: Schema, b: Schema): Schema {
  return {
    ...a,
    ...b,
    properties: { ...(a.properties as Schema | undefined), ...(b.properties as Schema | undefined) },
    required: [
      ...((a.required as string[] | undefined) ?? []),
      ...((b.required as string[] | undefined) ?? []),
    ],
  };
}

function pickType(schema: Schema): string | undefined {
  const type = schema.type;
  if (Array.isArray(type)) return (type.find((t) => t !== 'null') ?? type[0]) as string | undefined;
  if (typeof type === 'string') return type;
  if (isSchema(schema.properties)) return 'object';
  if (schema.items !== undefined) return 'array';
  return undefined;
}

function objectFor(schema: Schema, context: Context): Record<string, unknown> {
  const properties = isSchema(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const value: Record<string, unknown> = {};
  for (const [key, property] of Object.entries(properties)) {
    // Deep in a recursive schema, only what is required.
    if (context.depth >= MAX_DEPTH && !required.has(key)) continue;
    value[key] = build(property, context);
  }
  for (const key of required) if (!(key in value)) value[key] = context.text;
  return value;
}

function arrayFor(schema: Schema, context: Context): unknown[] {
  const min = typeof schema.minItems === 'number' ? schema.minItems : 0;
  const max = typeof schema.maxItems === 'number' ? schema.maxItems : Infinity;
  const count = Math.min(Math.max(min, context.depth >= MAX_DEPTH ? 0 : 1), max);
  if (Array.isArray(schema.prefixItems)) {
    return schema.prefixItems
      .slice(0, Math.max(count, schema.prefixItems.length))
      .map((item) => build(item, context));
  }
  return Array.from({ length: count }, () => build(schema.items, context));
}

const FORMATTED: Record<string, string> = {
  'date-time': '2026-01-01T00:00:00Z',
  date: '2026-01-01',
  time: '00:00:00Z',
  duration: 'P1D',
  email: 'user@example.com',
  'idn-email': 'user@example.com',
  hostname: 'example.com',
  'idn-hostname': 'example.com',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  uri: 'https://example.com/',
  'uri-reference': 'https://example.com/',
  iri: 'https://example.com/',
  uuid: '00000000-0000-4000-8000-000000000000',
};

function stringFor(schema: Schema, text: string): string {
  const format = typeof schema.format === 'string' ? FORMATTED[schema.format] : undefined;
  let value = format ?? text;
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
  if (value.length < min) value = value.padEnd(min, '.');
  if (value.length > max) value = value.slice(0, max);
  return value;
}

function numberFor(schema: Schema, integer: boolean): number {
  const step =
    typeof schema.multipleOf === 'number' && schema.multipleOf > 0 ? schema.multipleOf : integer ? 1 : 0;
  let low = -Infinity;
  if (typeof schema.minimum === 'number') low = schema.minimum;
  if (typeof schema.exclusiveMinimum === 'number')
    low = Math.max(low, schema.exclusiveMinimum + (step || 1e-9));
  let high = Infinity;
  if (typeof schema.maximum === 'number') high = schema.maximum;
  if (typeof schema.exclusiveMaximum === 'number')
    high = Math.min(high, schema.exclusiveMaximum - (step || 1e-9));
  let value = Math.min(Math.max(0, low), high);
  if (step) value = Math.ceil(value / step) * step;
  if (value > high && step) value -= step;
  return integer ? Math.round(value) : value;
}
