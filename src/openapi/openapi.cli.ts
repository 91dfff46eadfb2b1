/**
 * `npm run openapi`: writes docs/openapi.json from the builder and the error table of docs/api.md from
 * the error catalogue, both formatted by prettier so `npm run format:check` agrees. A development tool:
 * prettier is a dev dependency.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import * as prettier from 'prettier';
import { buildOpenApiDocument } from './openapi.builder.js';
import { withErrorTable } from './error-table.js';

async function formatted(file: string, text: string): Promise<string> {
  const options = (await prettier.resolveConfig(file)) ?? {};
  return prettier.format(text, { ...options, filepath: file });
}

async function main(): Promise<void> {
  const documentFile = resolve('docs', 'openapi.json');
  await writeFile(
    documentFile,
    await formatted(documentFile, JSON.stringify(buildOpenApiDocument(), null, 2)),
  );
  const apiFile = resolve('docs', 'api.md');
  await writeFile(apiFile, await formatted(apiFile, withErrorTable(await readFile(apiFile, 'utf8'))));
  console.log(`Wrote ${documentFile} and the error table of ${apiFile}`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
