import { Ajv2020 } from 'ajv/dist/2020.js';
import { exampleFor } from './schema-example.js';

describe('exampleFor', () => {
  const ajv = new Ajv2020({ strict: false, validateFormats: false }); // formats are filled from a table; types and bounds are what matter here
  const valid = (schema: Record<string, unknown>) => {
    const value = exampleFor(schema, 'hello');
    const validate = ajv.compile(schema);
    expect({ value, ok: validate(value), errors: validate.errors ?? null }).toEqual({
      value,
      ok: true,
      errors: null,
    });
    return value;
  };

  it('fills a strict object with every property, strings with the given text', () => {
    expect(
      valid({
        type: 'object',
        properties: { name: { type: 'string' }, age: { type: 'integer' }, ok: { type: 'boolean' } },
        required: ['name', 'age', 'ok'],
        additionalProperties: false,
      }),
    ).toEqual({ name: 'hello', age: 0, ok: true });
  });

  it('honours enums, const, nullable types, anyOf and numeric bounds', () => {
    valid({
      type: 'object',
      properties: {
        colour: { type: 'string', enum: ['red', 'green'] },
        kind: { const: 'fixed' },
        maybe: { type: ['string', 'null'] },
        either: { anyOf: [{ type: 'null' }, { type: 'number', minimum: 3 }] },
        score: { type: 'number', exclusiveMinimum: 1, maximum: 5 },
        even: { type: 'integer', minimum: 3, multipleOf: 2 },
      },
      required: ['colour', 'kind', 'maybe', 'either', 'score', 'even'],
    });
  });

  it('builds arrays to minItems, string formats and lengths', () => {
    valid({
      type: 'object',
      properties: {
        tags: { type: 'array', items: { type: 'string', minLength: 8 }, minItems: 2 },
        when: { type: 'string', format: 'date-time' },
        email: { type: 'string', format: 'email' },
        code: { type: 'string', maxLength: 3 },
      },
      required: ['tags', 'when', 'email', 'code'],
    });
  });

  it('follows $ref into $defs, recursion included, and merges allOf', () => {
    valid({
      type: 'object',
      properties: {
        root: { $ref: '#/$defs/node' },
        both: { allOf: [{ $ref: '#/$defs/a' }, { $ref: '#/$defs/b' }] },
      },
      required: ['root', 'both'],
      $defs: {
        node: {
          type: 'object',
          properties: {
            label: { type: 'string' },
            children: { type: 'array', items: { $ref: '#/$defs/node' } },
          },
          required: ['label', 'children'],
        },
        a: { type: 'object', properties: { x: { type: 'integer' } }, required: ['x'] },
        b: { type: 'object', properties: { y: { type: 'string' } }, required: ['y'] },
      },
    });
  });
});
