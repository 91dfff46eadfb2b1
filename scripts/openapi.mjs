#!/usr/bin/env node
// `npm run openapi`: writes docs/openapi.json from the builder and the generated tables of docs/api.md,
// both formatted by prettier so `npm run format:check` agrees. A development tool, kept out of src/
// (and so out of the production image) because prettier is a dev dependency; it reads the built tree.
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import * as prettier from 'prettier';
import { buildOpenApiDocument } from '../dist/src/openapi/openapi.builder.js';
import { withErrorTable } from '../dist/src/openapi/error-table.js';
import { withParameterTable } from '../dist/src/openapi/parameter-table.js';

const root = resolve(import.meta.dirname, '..');

async function formatted(file, text) {
  const options = (await prettier.resolveConfig(file)) ?? {};
  return prettier.format(text, { ...options, filepath: file });
}

async function main() {
  const documentFile = resolve(root, 'docs', 'openapi.json');
  await writeFile(
    documentFile,
    await formatted(documentFile, JSON.stringify(buildOpenApiDocument(), null, 2)),
  );
  const apiFile = resolve(root, 'docs', 'api.md');
  await writeFile(
    apiFile,
    await formatted(apiFile, withParameterTable(withErrorTable(await readFile(apiFile, 'utf8')))),
  );
  console.log(`Wrote ${documentFile} and the generated tables of ${apiFile}`);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
