import { jest } from '@jest/globals';
import { describeUnexpected } from '../errors/all-exceptions.filter.js';
import { JsonLogger } from './json-logger.js';
import { requestContext } from './request-context.js';

/** The lines `work` writes to stdout. */
function captureStdout(work: () => void): string[] {
  const lines: string[] = [];
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    work();
  } finally {
    write.mockRestore();
  }
  return lines;
}

describe('JsonLogger', () => {
  it('writes one JSON line with the request ids and drops the stack Nest passes', () => {
    const lines = captureStdout(() =>
      requestContext.run({ requestId: 'req_1', organizationId: 'org-1' }, () => {
        new JsonLogger('log').error('boom', 'Error: boom\n    at secret.ts:1:1', 'Responses');
      }),
    );
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0]);
    expect(entry).toMatchObject({
      level: 'error',
      msg: 'boom',
      requestId: 'req_1',
      organizationId: 'org-1',
      context: 'Responses',
    });
    expect(lines[0]).not.toContain('secret.ts');
  });

  it("writes Nest's route mapping at debug level: hidden at the default level", () => {
    const lines = captureStdout(() => {
      new JsonLogger('log').log('Mapped {/v1/responses, POST} route', 'RouterExplorer');
      new JsonLogger('log').log('Nest application successfully started', 'NestApplication');
      new JsonLogger('debug').log('Mapped {/healthz, GET} route', 'RouterExplorer');
    });
    expect(lines.map((line) => JSON.parse(line))).toMatchObject([
      { level: 'log', context: 'NestApplication' },
      { level: 'debug', context: 'RouterExplorer', msg: 'Mapped {/healthz, GET} route' },
    ]);
  });
});

describe('describeUnexpected', () => {
  it('keeps a database error to its class and driver code: no SQL, no parameters', () => {
    const error = Object.assign(new Error('relation "x" does not exist'), {
      name: 'QueryFailedError',
      query: 'SELECT * FROM x WHERE key = $1',
      parameters: ['swb_secret'],
      driverError: { code: '42P01' },
    });
    const described = describeUnexpected(error);
    expect(described).toEqual({ msg: 'database error', error: 'QueryFailedError', driverCode: '42P01' });
    expect(JSON.stringify(described)).not.toContain('swb_secret');
  });
});
