import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { QueryFailedError } from 'typeorm';
import { DatabaseOutage, isDatabaseUnavailable } from './database-outage.js';
import { toApiError } from './all-exceptions.filter.js';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });
const queryFailed = (driverError: Error) => new QueryFailedError('SELECT 1', [], driverError);

describe('isDatabaseUnavailable', () => {
  it.each([
    ['connection refused', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['reset mid-query', queryFailed(withCode('read ECONNRESET', 'ECONNRESET'))],
    ['terminated', queryFailed(new Error('Connection terminated unexpectedly'))],
    ['stalled connect', new Error('Connection terminated due to connection timeout')],
    ['admin shutdown', queryFailed(withCode('terminating connection due to administrator command', '57P01'))],
    ['starting up', withCode('the database system is starting up', '57P03')],
    ['read-only', queryFailed(withCode('cannot execute INSERT in a read-only transaction', '25006'))],
    ['too many connections', withCode('sorry, too many clients already', '53300')],
    ['dead client', new Error('Client has encountered a connection error and is not queryable')],
  ])('is true for %s', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['invalid text', queryFailed(withCode('invalid byte sequence for encoding "UTF8": 0x00', '22021'))],
    ['unique violation', queryFailed(withCode('duplicate key value', '23505'))],
    ['a plain bug', new TypeError('x is undefined')],
    ['not an error', 'ECONNREFUSED'],
    [
      "the client's aborted upload",
      Object.assign(withCode('request aborted', 'ECONNABORTED'), { status: 400, type: 'request.aborted' }),
    ],
  ])('is false for %s', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });

  it('maps to 503 service_unavailable with Retry-After', () => {
    const error = toApiError(withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'));
    expect(error?.status).toBe(503);
    expect(error?.toBody().error.code).toBe('service_unavailable');
    expect(error?.headers['Retry-After']).toBe('2');
  });
});

describe('a transaction rolled back in a conflict', () => {
  it.each([
    ['a deadlock victim', '40P01'],
    ['a serialization failure', '40001'],
  ])('%s is 503 service_unavailable with Retry-After, and no outage', (_name, code) => {
    const failure = queryFailed(withCode('deadlock detected', code));
    expect(isDatabaseUnavailable(failure)).toBe(false);
    const error = toApiError(failure);
    expect(error?.status).toBe(503);
    expect(error?.toBody().error.code).toBe('service_unavailable');
    expect(error?.toBody().error.message).not.toContain('deadlock');
    expect(error?.headers['Retry-After']).toBe('1');
  });
});

describe('DatabaseOutage', () => {
  it('logs the first failure and the recovery, not every failure', () => {
    const error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const outage = new DatabaseOutage();
    const started = jest.fn();
    outage.onOutage(started);
    for (let i = 0; i < 5; i++) outage.failed(withCode('connect ECONNREFUSED', 'ECONNREFUSED'));
    expect(outage.down).toBe(true);
    expect(error).toHaveBeenCalledTimes(1);
    expect(started).toHaveBeenCalledTimes(1);
    outage.recovered();
    outage.recovered();
    expect(outage.down).toBe(false);
    expect(log).toHaveBeenCalledTimes(1);
    expect(log.mock.calls[0][0]).toMatchObject({ msg: 'database available again', failures: 5 });
    outage.failed(new Error('Connection terminated unexpectedly'));
    expect(error).toHaveBeenCalledTimes(2);
    error.mockRestore();
    log.mockRestore();
  });
});
