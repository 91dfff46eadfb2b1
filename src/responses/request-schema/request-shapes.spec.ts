import { ApiError } from '../../common/errors/error-catalogue.js';
import type { JsonSchema, RequestField } from '../../common/request-schema/request-field.js';
import { fieldsOf } from '../../common/request-schema/request-schema.js';
import { CREATE_RESPONSE_FIELDS } from './create-response.fields.js';
import { REQUEST_SHAPES } from './request-shapes.js';

// The nested shapes are the document's; the fields' parsers are the service's. These cases hold
// the two together where a shape states a limit or a list of values the parser enforces.

const FIELDS = fieldsOf(CREATE_RESPONSE_FIELDS);
const field = (name: string): RequestField =>
  FIELDS.find((candidate) => candidate.name === name) as RequestField;
const parse = (name: string, value: unknown): unknown => field(name).parse(value, { [name]: value });
const refusal = (name: string, value: unknown): string | undefined => {
  try {
    parse(name, value);
    return undefined;
  } catch (error) {
    return error instanceof ApiError ? error.code : String(error);
  }
};
const property = (shape: JsonSchema, name: string): JsonSchema =>
  (shape.properties as Record<string, JsonSchema>)[name];

function refsIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(refsIn);
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) =>
    key === '$ref' && typeof inner === 'string' ? [inner.split('/').pop() ?? ''] : refsIn(inner),
  );
}

describe('request shapes', () => {
  it('every shape the fields name is described here, and every shape those name', () => {
    const named = refsIn(FIELDS.map((candidate) => candidate.schema));
    expect(named.length).toBeGreaterThan(0);
    for (const name of [...named, ...refsIn(REQUEST_SHAPES)]) {
      expect(Object.keys(REQUEST_SHAPES)).toContain(name);
    }
  });

  it('every message role of the shape is accepted, and no other', () => {
    const roles = property(REQUEST_SHAPES.InputMessage, 'role').enum as string[];
    for (const role of roles) expect(refusal('input', [{ role, content: 'hi' }])).toBeUndefined();
    expect(refusal('input', [{ role: 'tool', content: 'hi' }])).toBe('invalid_input_type');
  });

  it("a function tool's name follows the shape's pattern", () => {
    const pattern = new RegExp(property(REQUEST_SHAPES.FunctionTool, 'name').pattern as string);
    const tool = (name: string) => [{ type: 'function', name }];
    expect(pattern.test('a'.repeat(64))).toBe(true);
    expect(refusal('tools', tool('a'.repeat(64)))).toBeUndefined();
    expect(pattern.test('a'.repeat(65))).toBe(false);
    expect(refusal('tools', tool('a'.repeat(65)))).toBe('invalid_tool_name');
  });

  it("file_search's max_num_results is bounded as the shape says", () => {
    const { maximum } = property(REQUEST_SHAPES.FileSearchTool, 'max_num_results') as { maximum: number };
    const tool = (max: number) => [
      {
        type: 'file_search',
        vector_store_ids: ['vs_8eee17c3-5c44-4b4e-9d0e-0c1f0f3b9a11'],
        max_num_results: max,
      },
    ];
    expect(refusal('tools', tool(maximum))).toBeUndefined();
    expect(refusal('tools', tool(maximum + 1))).toBeDefined();
  });

  it('every text format of the shape is accepted', () => {
    const branches = REQUEST_SHAPES.TextFormat.oneOf;
    const formats = branches.map((branch) => property(branch, 'type').const as string);
    expect(formats).toEqual(['text', 'json_object', 'json_schema']);
    const example: Record<string, object> = {
      json_schema: { name: 'answer', schema: { type: 'object' } },
    };
    for (const type of formats) {
      expect(refusal('text', { format: { type, ...example[type] } })).toBeUndefined();
    }
    expect(refusal('text', { format: { type: 'yaml' } })).toBeDefined();
  });
});
