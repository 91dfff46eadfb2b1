#!/usr/bin/env node
/**
 * The admin command-line tool: `npx switchboard-admin <command> …` (package.json `bin`), or in a container
 * `node dist/src/admin/admin.cli.js <command> …`. See docs/admin-cli.md.
 */
import { runAdmin } from './admin.runner.js';

process.exitCode = await runAdmin(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr });
