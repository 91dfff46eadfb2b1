import fc from 'fast-check';

/**
 * fast-check arbitraries for the bad-input suite (test/fuzz.e2e-spec.ts): text with the
 * characters that break storage and parsers, JSON of any shape with deep nesting and huge
 * values, percent-encodings valid and not, header bytes, and raw HTTP/1.1 framings.
 */

/** Characters and fragments that have broken something somewhere. */
const NASTY = [
  '\u0000',
  '\ud800',
  '\udfff',
  '\ud83d',
  '\u0001',
  '\u001f',
  '\u007f',
  '\u0085',
  '\u2028',
  '\ufeff',
  '\ufffd',
  '😀',
  'é',
  'İ',
  '%',
  '%00',
  '%ZZ',
  '%ED%A0%80',
  '../',
  '\\',
  '"',
  "'",
  '\t',
  '\r\n',
  '{',
  '[',
  'null',
  '__proto__',
  'constructor',
  '$gt',
];

export const nastyText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc
    .array(fc.oneof(fc.constantFrom(...NASTY), fc.string({ maxLength: 4 })), { maxLength: 6 })
    .map((parts) => parts.join('')),
);

/** Marks where a value nested `levels` deep goes; JSON.stringify itself would overflow on it. */
const DEEP_KEY = '__fuzz_deep__';
const deepMarker = fc.integer({ min: 200, max: 30_000 }).map((levels) => ({ [DEEP_KEY]: levels }));
const hugeText = fc.integer({ min: 1_000, max: 120_000 }).map((length) => 'x'.repeat(length));

const leaf: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: nastyText, weight: 6 },
  { arbitrary: fc.integer(), weight: 1 },
  { arbitrary: fc.double(), weight: 1 },
  { arbitrary: fc.boolean(), weight: 1 },
  { arbitrary: fc.constant(null), weight: 1 },
  { arbitrary: hugeText, weight: 1 },
  { arbitrary: deepMarker, weight: 1 },
);

export const anyJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', maxDepth: 4 },
    leaf,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(nastyText, tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** JSON text of a value, with every deep marker replaced by its nesting. */
export function toJsonText(value: unknown): string {
  const text = JSON.stringify(value) ?? 'null';
  return text.replace(
    new RegExp(`\\{"${DEEP_KEY}":(\\d+)\\}`, 'g'),
    (_, levels: string) => '['.repeat(Number(levels)) + ']'.repeat(Number(levels)),
  );
}

type Path = (string | number)[];

function pathsOf(value: unknown, prefix: Path = []): Path[] {
  if (typeof value !== 'object' || value === null) return [prefix];
  const children = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
  return [
    prefix,
    ...children.flatMap((key) => pathsOf((value as Record<string, unknown>)[key], [...prefix, key])),
  ];
}

function replaced(value: unknown, path: Path, replacement: unknown, addKey?: string): unknown {
  const copy = structuredClone(value);
  if (path.length === 0 && addKey === undefined) return replacement;
  let parent = copy as Record<string | number, unknown>;
  for (const key of path.slice(0, addKey === undefined ? -1 : path.length)) {
    parent = parent[key] as Record<string | number, unknown>;
  }
  if (typeof parent !== 'object' || parent === null) return replacement;
  const key = addKey ?? path[path.length - 1];
  if (replacement === undefined) delete parent[key];
  else parent[key] = replacement;
  return copy;
}

/** A valid body with one thing changed: a value replaced or removed, or a key added. */
export function mutatedBody(base: unknown): fc.Arbitrary<unknown> {
  const paths = pathsOf(base);
  return fc.oneof(
    fc
      .tuple(fc.constantFrom(...paths), fc.option(anyJson, { nil: undefined }))
      .map(([path, value]) => replaced(base, path, value)),
    fc
      .tuple(fc.constantFrom(...paths), nastyText, anyJson)
      .map(([path, key, value]) => replaced(base, path, value, key)),
  );
}

/** The same value in another shape: wrapped in arrays, an object, or (for an array) keyed by index. */
function reshapes(value: unknown): unknown[] {
  const shapes: unknown[] = [[value], [[value]], { 0: value }];
  if (Array.isArray(value)) shapes.push(value.map((item) => [item]));
  else if (typeof value !== 'object' || value === null) shapes.push({});
  return shapes;
}

/**
 * A valid body with the shape of one of its values changed (issue 24's sweep): arrays where
 * objects are declared (and arrays of arrays), objects where scalars are, scalars where arrays
 * are, extra nesting. Nothing else is wrong, so the request reaches the route's validation.
 */
export function reshapedBody(base: unknown): fc.Arbitrary<unknown> {
  return fc.constantFrom(...pathsOf(base)).chain((path) => {
    let node = base;
    for (const key of path) node = (node as Record<string | number, unknown>)[key];
    return fc.constantFrom(...reshapes(node)).map((shape) => replaced(base, path, shape));
  });
}

/** Every body `reshapedBody` can generate from `base`, for an exhaustive sweep. */
export function allReshapedBodies(base: unknown): unknown[] {
  return pathsOf(base).flatMap((path) => {
    let node = base;
    for (const key of path) node = (node as Record<string | number, unknown>)[key];
    return reshapes(node).map((shape) => replaced(base, path, shape));
  });
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/**
 * Percent-encodes as a careful client would, except that lone surrogates become the bytes a
 * careless one sends (WTF-8: `%ED%A0%80`), which no UTF-8 decoder accepts.
 */
export function percentEncode(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const pair =
      unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    const char = pair ? text.slice(i, i + 2) : text[i];
    if (pair) i++;
    if (UNRESERVED.test(char)) {
      out += char;
      continue;
    }
    const bytes =
      !pair && unit >= 0xd800 && unit <= 0xdfff
        ? [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]
        : [...Buffer.from(char, 'utf8')];
    out += bytes.map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  }
  return out;
}

/** A path segment or query value as sent: mostly encoded text, sometimes broken escapes. */
export function urlComponent(valid: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...valid), weight: 8 },
    { arbitrary: nastyText.map(percentEncode), weight: 2 },
    {
      arbitrary: fc.constantFrom('%ZZ', '%E0%A4%A', '%', '%C0%80', '%FF', '%00', '..', '.', '', 'a+b'),
      weight: 1,
    },
  );
}

/** A header value as bytes (a string of chars ≤ U+00FF), never with the bytes fetch refuses. */
export const headerBytes: fc.Arbitrary<string> = fc
  .oneof(
    nastyText.map((text) => Buffer.from(text, 'utf8').toString('latin1')),
    fc.uint8Array({ maxLength: 24 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
  )
  .map((value) => value.replace(/[^\t\x20-\x7e\x80-\xff]/g, '').trim());

/** Bytes Node's HTTP parser must refuse when they land inside a header line. */
const BAD_HEADER_BYTES = ['\u0000', '\r', '\n', '\u007f', '\u0001', '\u000b', ' : ', '\r\n \r\n'];

export interface RawCase {
  /** What was generated, for the failure message. */
  label: string;
  bytes: Buffer;
}

/**
 * A raw HTTP/1.1 request: a valid start (Host, then `Connection: close`, so the server always
 * ends the exchange), then headers that may be broken, then a framing that is complete (so the
 * server never waits for bytes that will not come) but possibly contradictory.
 */
export function rawHttpCase(targets: string[], apiKey: string): fc.Arbitrary<RawCase> {
  const body = '{"userId":"raw","claimKey":"k","claimValue":1}';
  const framing = fc.constantFrom<[string, string]>(
    ['none', ''],
    ['length', `Content-Length: ${body.length}\r\n\r\n${body}`],
    ['chunked', `Transfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`],
    ['two lengths', `Content-Length: ${body.length}\r\nContent-Length: ${body.length + 1}\r\n\r\n${body}`],
    ['length and chunked', `Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`],
    ['bad chunk size', `Transfer-Encoding: chunked\r\n\r\nzz\r\n${body}\r\n0\r\n\r\n`],
    ['negative chunk', `Transfer-Encoding: chunked\r\n\r\n-1\r\n${body}\r\n0\r\n\r\n`],
    ['huge chunk', `Transfer-Encoding: chunked\r\n\r\nffffffffffffffffffff\r\n${body}\r\n0\r\n\r\n`],
    ['signed length', `Content-Length: +${body.length}\r\n\r\n${body}`],
  );
  const header = fc.tuple(
    fc.constantFrom('x-user-id', 'x-api-key', 'x-user-token', 'x-user-tokens', 'x-custom', 'content-type'),
    headerBytes,
  );
  const mutation = fc.oneof(
    fc.constant<['none']>(['none']),
    fc.tuple(fc.constant('insert' as const), fc.constantFrom(...BAD_HEADER_BYTES), fc.nat()),
    fc.tuple(
      fc.constant('duplicate' as const),
      fc.constantFrom('x-user-id', 'x-user-tokens', 'content-length'),
    ),
    fc.tuple(fc.constant('oversized' as const), fc.integer({ min: 15 * 1024, max: 70 * 1024 })),
    fc.tuple(
      fc.constant('request line' as const),
      fc.constantFrom<(method: string, target: string) => string>(
        (_, target) => `G@T ${target} HTTP/1.1`,
        (method, target) => `${method}  ${target} HTTP/1.1`,
        (method, target) => `${method} ${target} HTTP/1.2`,
        (method, target) => `${method} ${target} HTTP/2.0`,
        (method, target) => `${method} ${target}/\u00e9\u00ff HTTP/1.1`,
        (method, target) => `${method} ${target}#frag HTTP/1.1`,
      ),
    ),
  );
  return fc
    .record({
      method: fc.constantFrom('GET', 'POST', 'DELETE', 'PUT'),
      target: fc.constantFrom(...targets),
      headers: fc.array(header, { maxLength: 3 }),
      framing,
      mutation,
    })
    .map(({ method, target, headers, framing: [framingName, framingText], mutation }) => {
      const lines = [
        `x-api-key: ${apiKey}`,
        'content-type: application/json',
        ...headers.map(([name, value]) => `${name}: ${value}`),
      ];
      let requestLine = `${method} ${target} HTTP/1.1`;
      if (mutation[0] === 'insert' && lines.length > 0) {
        const at = mutation[2] % lines.length;
        const line = lines[at];
        const position = 1 + (mutation[2] % Math.max(1, line.length - 1));
        lines[at] = line.slice(0, position) + mutation[1] + line.slice(position);
      } else if (mutation[0] === 'duplicate') {
        lines.push(`${mutation[1]}: a`, `${mutation[1]}: b`);
      } else if (mutation[0] === 'oversized') {
        lines.push(`x-user-tokens: ${'a'.repeat(mutation[1])}`);
      } else if (mutation[0] === 'request line') {
        requestLine = mutation[1](method, target);
      }
      const head = `${requestLine}\r\nHost: fuzz\r\nConnection: close\r\n${lines.map((l) => `${l}\r\n`).join('')}`;
      const text = framingName === 'none' ? `${head}\r\n` : head + framingText;
      return {
        label: `${requestLine.slice(0, 80)} | framing: ${framingName} | mutation: ${mutation[0]}`,
        bytes: Buffer.from(text, 'latin1'),
      };
    });
}
