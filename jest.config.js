/** Jest runs the TypeScript sources as native ES modules (NestJS 12 is ESM-only), compiled by SWC. */
const swc = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
    keepClassNames: true,
  },
  module: { type: 'es6' },
  sourceMaps: 'inline',
};

export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', swc] },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
  testTimeout: 60000,
  maxWorkers: 2,
  // A worker keeps every test file it ran: Node's vm modules (jest's ESM mode) are never freed, so
  // each file's module graph and booted app stay (~25-40 MB a file; ~2 GB for a worker running half
  // the suite), and every later file pays to garbage-collect them (twice the CPU at 0.5 GB; see
  // docs/benchmarks.md, cispeed). A worker whose heap passes this after a file is replaced.
  // It also makes jest use a worker for a single file, never the main process.
  workerIdleMemoryLimit: '512MB',
  // "A worker process has failed to exit gracefully" after a run of several files is not an open
  // handle: probed at jest-worker's end message (a preload logging process.getActiveResourcesInfo()
  // and the 'exit' event), every worker holds only its stdio/IPC pipes and reaches 'exit' within
  // 0-2 ms, in the runs that print it too. What outlasts jest-worker's fixed 500 ms is the process
  // tearing down after 'exit': the heap of every file's module graph and booted app (see above).
  // No forceExit; each file closes what it opens (apps, databases, fake servers).
};
