import { APIError } from 'openai';
import { ContextLengthError, UnsupportedParameterError, UpstreamError } from './llm.types.js';
import { UpstreamDeadlines } from './upstream-deadlines.js';
import { classifyUpstreamFailure, providerMessage, StreamEndedEarlyError } from './upstream-failure.js';
import { RetryableUpstreamError } from './upstream-retry.js';

function state(outputStarted = false) {
  const deadlines = new UpstreamDeadlines(
    { headersMs: 60_000, firstTokenMs: 60_000, stallMs: 60_000 },
    new AbortController(),
  );
  deadlines.clear();
  return { deadlines, clientAborted: false, outputStarted };
}

const apiError = (status: number, error: Record<string, unknown>, headers: Record<string, string> = {}) =>
  APIError.generate(status, { error }, undefined, new Headers(headers));

describe('classifyUpstreamFailure', () => {
  it('passes a content-policy refusal on as a 400-class error with the provider reason, not retried', () => {
    const failure = classifyUpstreamFailure(
      apiError(400, { code: 'content_policy_violation', message: 'Rejected by our safety system.' }),
      state(),
    );
    expect(failure).toBeInstanceOf(UpstreamError);
    expect((failure as UpstreamError).code).toBe('content_policy_violation');
    expect(failure.message).toContain('Rejected by our safety system.');
  });

  it('keeps the context-length and refused-parameter errors of before', () => {
    expect(
      classifyUpstreamFailure(
        apiError(400, { code: 'context_length_exceeded', message: 'too long' }),
        state(),
      ),
    ).toBeInstanceOf(ContextLengthError);
    expect(
      classifyUpstreamFailure(apiError(400, { message: 'nope', param: 'top_p' }), state()),
    ).toBeInstanceOf(UnsupportedParameterError);
  });

  it('retries a 429 with its Retry-After, and carries it to the client', () => {
    const failure = classifyUpstreamFailure(
      apiError(429, { message: 'slow down' }, { 'retry-after': '3' }),
      state(),
    );
    expect(failure).toBeInstanceOf(RetryableUpstreamError);
    expect((failure as RetryableUpstreamError).retryAfterMs).toBe(3000);
    expect((failure as RetryableUpstreamError).upstream.code).toBe('upstream_rate_limited');
    expect((failure as RetryableUpstreamError).upstream.retryAfterSeconds).toBe(3);
  });

  it('does not retry an exhausted quota, nor a 401, and never shows their text', () => {
    const quota = classifyUpstreamFailure(
      apiError(429, { code: 'insufficient_quota', message: 'pay' }),
      state(),
    );
    expect(quota).toBeInstanceOf(UpstreamError);
    const auth = classifyUpstreamFailure(apiError(401, { message: 'Incorrect API key sk-abc' }), state());
    expect(auth).toBeInstanceOf(UpstreamError);
    expect(auth.message).not.toContain('sk-abc');
  });

  it('says a stream was cut: retryable before output, final after', () => {
    expect(classifyUpstreamFailure(new StreamEndedEarlyError(0), state(false))).toBeInstanceOf(
      RetryableUpstreamError,
    );
    const after = classifyUpstreamFailure(new StreamEndedEarlyError(0), state(true)) as UpstreamError;
    expect(after.code).toBe('upstream_stream_interrupted');
    const malformed = classifyUpstreamFailure(new StreamEndedEarlyError(2), state(true)) as UpstreamError;
    expect(malformed.code).toBe('upstream_malformed_response');
    const reset = classifyUpstreamFailure(new TypeError('terminated'), state(true)) as UpstreamError;
    expect(reset.code).toBe('upstream_stream_interrupted');
  });
});

describe('providerMessage', () => {
  it('redacts what looks like a credential, strips control characters and bounds the length', () => {
    const message = providerMessage({
      message: 'Bad key sk-proj-AbC123xyz789 in\nheader Bearer abc.def and token ' + 'x'.repeat(40),
    });
    expect(message).toBe('Bad key [redacted] in header Bearer [redacted] and token [redacted]');
    expect(providerMessage({ message: 'y '.repeat(500) }).length).toBeLessThanOrEqual(400);
    expect(providerMessage(undefined)).toBe('');
  });
});
