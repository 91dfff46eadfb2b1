import { ApiError } from '../errors/error-catalogue.js';

/**
 * The one text rule of the API: what PostgreSQL cannot store (the NUL character in text or
 * JSONB, unpaired UTF-16 surrogates) is refused at the edge with 400 `invalid_request` naming
 * the field, before any controller, service or database sees it. JSON is walked iteratively,
 * so pathological nesting cannot overflow the stack here, and is bounded for whatever is
 * recursive downstream (JSON.stringify, class-validator, class-transformer, jsonb parsing).
 */

/** Objects and arrays nest at most this many levels below a body's top level. */
export const MAX_JSON_DEPTH = 256;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** Field names in messages are cut here: a path 256 levels deep is not worth reading. */
const MAX_FIELD_NAME = 120;

/** Refuses text PostgreSQL cannot store; `field` is how the message names it. */
export function checkStorableText(text: string, field: string): void {
  if (text.includes('\u0000')) {
    throw new ApiError('invalid_request', `${field} must not contain the NUL character (\\u0000)`);
  }
  if (LONE_SURROGATE.test(text)) {
    throw new ApiError('invalid_request', `${field} contains an unpaired UTF-16 surrogate`);
  }
}

interface Pending {
  value: unknown;
  depth: number;
  parent: Pending | null;
  key: string | number | null;
}

/** How messages name the value: itself (`root`) and its fields (`prefix` + path). */
export interface JsonName {
  root: string;
  prefix: string;
}

const BODY: JsonName = { root: 'The request body', prefix: '' };

/**
 * Every string and object key of a parsed JSON value, at any depth, and the nesting depth.
 * Fields are named as a client wrote them: `input[2].content[0].text`.
 */
export function checkStorableJson(value: unknown, name: JsonName = BODY): void {
  const pending: Pending[] = [{ value, depth: 0, parent: null, key: null }];
  while (pending.length > 0) {
    const entry = pending.pop()!;
    const node = entry.value;
    if (typeof node === 'string') {
      checkStorableText(node, fieldName(entry, name));
    } else if (typeof node === 'object' && node !== null) {
      if (entry.depth > MAX_JSON_DEPTH) {
        throw new ApiError(
          'invalid_request',
          `${fieldName(entry, name)} nests deeper than ${MAX_JSON_DEPTH} levels`,
        );
      }
      if (Array.isArray(node)) {
        for (let index = node.length - 1; index >= 0; index--) {
          pending.push({ value: node[index], depth: entry.depth + 1, parent: entry, key: index });
        }
      } else {
        const keys = Object.keys(node);
        const owner = entry.parent === null ? name.root.toLowerCase() : fieldName(entry, name);
        for (const key of keys) checkStorableText(key, `A key of ${owner}`);
        for (let index = keys.length - 1; index >= 0; index--) {
          const key = keys[index];
          pending.push({
            value: (node as Record<string, unknown>)[key],
            depth: entry.depth + 1,
            parent: entry,
            key,
          });
        }
      }
    }
  }
}

/** `a.b[0]["odd key"]`, from the root down, cut to a readable length. */
function fieldName(entry: Pending, name: JsonName): string {
  const parts: string[] = [];
  for (let at: Pending | null = entry; at !== null && at.key !== null; at = at.parent) {
    parts.push(
      typeof at.key === 'number'
        ? `[${at.key}]`
        : IDENTIFIER.test(at.key)
          ? `.${at.key}`
          : `[${JSON.stringify(at.key.slice(0, 40))}]`,
    );
  }
  if (parts.length === 0) return name.root;
  const path = parts.reverse().join('').replace(/^\./, '');
  return name.prefix + (path.length > MAX_FIELD_NAME ? `${path.slice(0, MAX_FIELD_NAME)}…` : path);
}
