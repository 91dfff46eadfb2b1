import { ApiError } from '../../common/errors/error-catalogue.js';
import type { AttributeValue } from '../dto/vector-store-params.js';

export type { AttributeValue };

/**
 * OpenAI's attribute filters (`filters` of a search and of the file_search tool): a comparison
 * `{type: eq|ne|gt|gte|lt|lte|in|nin, key, value}` or a compound `{type: and|or, filters}`.
 * Parsed here, with each refusal naming the field, and compiled to a SQL condition on a
 * file's `attributes` whose values are bind parameters (never spliced into the SQL).
 */
export type AttributeFilter =
  | { type: 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte'; key: string; value: AttributeValue }
  | { type: 'in' | 'nin'; key: string; value: Array<string | number> }
  | { type: 'and' | 'or'; filters: AttributeFilter[] };

const COMPARISONS = new Set(['eq', 'ne', 'gt', 'gte', 'lt', 'lte']);
const SQL_OPERATORS = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;
const MAX_DEPTH = 8;
const MAX_CONDITIONS = 64;

function refuse(message: string): never {
  throw new ApiError('invalid_request', message);
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function parseAttributeFilter(raw: unknown, path = 'filters'): AttributeFilter {
  let conditions = 0;
  const parse = (node: unknown, at: string, depth: number): AttributeFilter => {
    if (!isObject(node)) refuse(`${at} must be an object`);
    if (depth > MAX_DEPTH) refuse(`${at}: filters nest at most ${MAX_DEPTH} deep`);
    if (++conditions > MAX_CONDITIONS) refuse(`${path} holds more than ${MAX_CONDITIONS} conditions`);
    const type = node.type;
    if (type === 'and' || type === 'or') {
      if (!Array.isArray(node.filters) || node.filters.length === 0) {
        refuse(`${at}.filters must be a non-empty array`);
      }
      return {
        type,
        filters: node.filters.map((child, i) => parse(child, `${at}.filters[${i}]`, depth + 1)),
      };
    }
    if (typeof node.key !== 'string' || node.key.length === 0 || node.key.length > 64) {
      refuse(`${at}.key must be a string of 1 to 64 characters`);
    }
    if (type === 'in' || type === 'nin') {
      const ok =
        Array.isArray(node.value) &&
        node.value.length > 0 &&
        node.value.every((v) => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)));
      if (!ok) refuse(`${at}.value must be a non-empty array of strings and numbers for "${type}"`);
      return { type, key: node.key, value: node.value as Array<string | number> };
    }
    if (typeof type !== 'string' || !COMPARISONS.has(type)) {
      refuse(`${at}.type must be one of eq, ne, gt, gte, lt, lte, in, nin, and, or`);
    }
    const value = node.value;
    const scalar =
      typeof value === 'string' ||
      typeof value === 'boolean' ||
      (typeof value === 'number' && Number.isFinite(value));
    if (!scalar) refuse(`${at}.value must be a string, a number or a boolean`);
    if ((type === 'eq' || type === 'ne') === false && typeof value === 'boolean') {
      refuse(`${at}: "${type}" compares numbers or strings, not booleans`);
    }
    return { type: type as 'eq', key: node.key, value };
  };
  return parse(raw, path, 0);
}

/**
 * The filter as a SQL condition on `column` (a jsonb of attributes); values go to `params`,
 * whose current length decides their numbers. A missing key matches only `ne` and `nin`.
 */
export function filterToSql(filter: AttributeFilter, column: string, params: unknown[]): string {
  const bind = (value: unknown, cast: string) => {
    params.push(value);
    return `$${params.length}::${cast}`;
  };
  switch (filter.type) {
    case 'and':
    case 'or':
      return `(${filter.filters.map((child) => filterToSql(child, column, params)).join(` ${filter.type.toUpperCase()} `)})`;
    case 'eq':
      return `(${column} -> ${bind(filter.key, 'text')}) = ${bind(JSON.stringify(filter.value), 'jsonb')}`;
    case 'ne':
      return `(${column} -> ${bind(filter.key, 'text')}) IS DISTINCT FROM ${bind(JSON.stringify(filter.value), 'jsonb')}`;
    case 'in':
      return `${bind(JSON.stringify(filter.value), 'jsonb')} @> jsonb_build_array(${column} -> ${bind(filter.key, 'text')})`;
    case 'nin':
      return `NOT COALESCE(${bind(JSON.stringify(filter.value), 'jsonb')} @> jsonb_build_array(${column} -> ${bind(filter.key, 'text')}), false)`;
    default: {
      const operator = SQL_OPERATORS[filter.type];
      const key = bind(filter.key, 'text');
      if (typeof filter.value === 'number') {
        return `(jsonb_typeof(${column} -> ${key}) = 'number' AND (${column} ->> ${key})::numeric ${operator} ${bind(filter.value, 'numeric')})`;
      }
      return `(jsonb_typeof(${column} -> ${key}) = 'string' AND (${column} ->> ${key}) COLLATE "C" ${operator} ${bind(filter.value, 'text')})`;
    }
  }
}
