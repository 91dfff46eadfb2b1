import { ApiError } from '../errors/error-catalogue.js';
import {
  booleanField,
  customField,
  enumField,
  KNOWN_FIELDS_ONLY,
  numberField,
  refusedField,
  stringField,
} from './request-field.js';
import { parameterRows, parseRequest, requestBodySchema } from './request-schema.js';

const STEPS = [
  customField('model', {
    required: true,
    schema: { type: 'string' },
    description: 'Which one',
    error: 'invalid_model',
    parse: (value) => String(value),
  }),
  booleanField('stream', false, { description: 'Stream it' }),
  KNOWN_FIELDS_ONLY,
  refusedField('prompt', 'prompt is not supported', { description: 'Refused' }),
  numberField('top_logprobs', 0, 20, { integer: true, description: 'Alternatives' }),
  enumField('truncation', ['auto', 'disabled'], 'disabled', { description: 'Cut' }),
  stringField('user', { maxLength: 4, description: 'Who' }),
  customField('input', {
    required: true,
    schema: { oneOf: [{ type: 'string' }, { type: 'array', minItems: 1 }] },
    description: 'What',
    error: ['invalid_input_type', 'invalid_request'],
    parse: (value) => value as string,
  }),
] as const;

function failure(body: unknown): { code: string; message: string } {
  try {
    parseRequest(STEPS, body);
  } catch (error) {
    if (error instanceof ApiError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('parsed');
}

describe('parseRequest', () => {
  it('reads each field, absent and null as its default', () => {
    expect(parseRequest(STEPS, { model: 'm', input: 'hi', stream: null, user: 'ab' })).toEqual({
      model: 'm',
      stream: false,
      prompt: undefined,
      top_logprobs: null,
      truncation: 'disabled',
      user: 'ab',
      input: 'hi',
    });
  });

  it('reports the body, then required fields, then the steps in their order', () => {
    expect(failure([])).toEqual({
      code: 'invalid_request',
      message: 'The request body must be a JSON object',
    });
    expect(failure({ input: 'x', seed: 1 })).toEqual({
      code: 'missing_required_field',
      message: 'Missing required field: model',
    });
    expect(failure({ model: 'm', input: 'x', stream: 1, seed: 1 }).message).toBe(
      'stream must be true or false',
    );
    expect(failure({ model: 'm', input: 'x', seed: 1, prompt: 'p' }).message).toBe('Unknown parameter: seed');
    expect(failure({ model: 'm', input: 'x', prompt: 'p', top_logprobs: 1.5 }).message).toBe(
      'prompt is not supported',
    );
    expect(failure({ model: 'm', input: 'x', top_logprobs: 1.5 }).message).toBe(
      'top_logprobs must be an integer from 0 to 20',
    );
    expect(failure({ model: 'm', input: 'x', truncation: 'x' }).message).toBe(
      'truncation must be one of "auto", "disabled"',
    );
    expect(failure({ model: 'm', input: 'x', user: 'abcde' }).message).toBe(
      'user must be a string of at most 4 characters',
    );
  });
});

describe('requestBodySchema and parameterRows', () => {
  it('derive the OpenAPI body and the docs rows from the same steps', () => {
    const schema = requestBodySchema(STEPS, 'A body') as { properties: Record<string, unknown> } & Record<
      string,
      unknown
    >;
    expect(schema.required).toEqual(['model', 'input']);
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.top_logprobs).toEqual({
      description: 'Alternatives',
      oneOf: [{ type: 'integer', minimum: 0, maximum: 20 }, { type: 'null' }],
    });
    expect(schema.properties.input).toEqual({
      description: 'What',
      oneOf: [{ type: 'string' }, { type: 'array', minItems: 1 }],
    });
    expect(parameterRows(STEPS).at(-1)).toEqual([
      '`input`',
      'string or array (not empty), required',
      '',
      '`invalid_input_type`, `invalid_request`',
      'What',
    ]);
  });
});
