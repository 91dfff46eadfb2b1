#!/usr/bin/env node
/**
 * The admin command-line tool: `npx switchboard-admin <command> …` (package.json `bin`), or in a container
 * `node dist/src/admin/admin.cli.js <command> …`. See docs/admin-cli.md.
 */
import { runAdmin } from './admin.runner.js';

// A reader that stops early (`| head`) closes the pipe: not an error of the tool, and no stack.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});
process.exitCode = await runAdmin(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr });
