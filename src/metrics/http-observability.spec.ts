import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { JsonLogger } from '../common/logging/json-logger.js';
import type { LogLevel } from '../config/app-config.js';
import { HttpObservability } from './http-observability.js';
import type { Metrics } from './metrics.service.js';

/** The access lines one finished request writes to stdout with the app's logger at `level`. */
function accessLines(level: LogLevel | false, path: string): Record<string, unknown>[] {
  const counted: string[] = [];
  const metrics = {
    httpRequest: (_method: string, route: string) => counted.push(route),
  } as unknown as Metrics;
  const observability = new HttpObservability(metrics);
  const logger = level === false ? false : new JsonLogger(level);
  // Without a logger of its own, the static Logger would write everything: the skip must be the reason for silence.
  Logger.overrideLogger(logger === false ? new JsonLogger('debug') : logger);
  observability.useLogger(logger);
  const req = { method: 'GET', baseUrl: '', route: { path } } as unknown as Request;
  const res = {
    headersSent: true,
    statusCode: 200,
    writableFinished: true,
    locals: {},
  } as unknown as Response;
  const lines: string[] = [];
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    observability.finish(req, res, performance.now(), { requestId: 'req_1' });
  } finally {
    write.mockRestore();
  }
  // Counted in metrics whatever the log level.
  expect(counted).toEqual([path]);
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('HttpObservability', () => {
  it('writes the access line at level log, probes only at debug', () => {
    expect(accessLines('log', '/v1/responses/:id')).toEqual([
      expect.objectContaining({
        msg: 'request',
        route: '/v1/responses/:id',
        requestId: 'req_1',
        status: 200,
      }),
    ]);
    expect(accessLines('log', '/healthz')).toEqual([]);
    expect(accessLines('debug', '/healthz')).toEqual([
      expect.objectContaining({ msg: 'request', route: '/healthz', level: 'debug' }),
    ]);
  });

  it('writes none when the level drops it, or without a logger', () => {
    expect(accessLines('error', '/v1/responses/:id')).toEqual([]);
    expect(accessLines('warn', '/v1/responses/:id')).toEqual([]);
    expect(accessLines(false, '/v1/responses/:id')).toEqual([]);
  });
});
