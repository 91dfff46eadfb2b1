import { runAdmin } from '../../src/admin/admin.runner.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface AdminRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (commands run with --json); undefined when it is not JSON. */
  json: any;
}

/** Runs the admin CLI in-process with `env`, as an administrator would, capturing its output. */
export async function runAdminCli(argv: readonly string[], env: Env): Promise<AdminRun> {
  let stdout = '';
  let stderr = '';
  const code = await runAdmin(
    argv,
    { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } },
    env,
  );
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  return { code, stdout, stderr, json };
}

/** The admin CLI of one test file; `env` is read at each call (the app starts in beforeAll). */
export function adminCli(env: () => Env) {
  const admin = (...argv: string[]): Promise<AdminRun> => runAdminCli(argv, env());

  /** Runs with --json, expects success and no stderr, and returns the parsed output. */
  async function ok(...argv: string[]): Promise<any> {
    const run = await admin(...argv, '--json');
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    return JSON.parse(run.stdout);
  }

  /** Expects exit code 1 with one `error: …` message on stderr, no stack trace; returns stderr. */
  async function fails(...argv: string[]): Promise<string> {
    const run = await admin(...argv);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^error: /);
    expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
    return run.stderr;
  }

  return { admin, ok, fails };
}
