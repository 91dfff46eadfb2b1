import { AbortOnAny } from './abort-on-any.js';

describe('AbortOnAny', () => {
  it('aborts with the reason of the first source that aborts', () => {
    const first = new AbortController();
    const second = new AbortController();
    const any = new AbortOnAny([first.signal, undefined, second.signal]);
    second.abort('second');
    first.abort('first');
    expect(any.signal.aborted).toBe(true);
    expect(any.signal.reason).toBe('second');
  });

  it('starts aborted when a source already is', () => {
    const source = new AbortController();
    source.abort('early');
    const any = new AbortOnAny([source.signal]);
    expect(any.signal.reason).toBe('early');
  });

  it('aborts the controller it is given, and leaves it alone once it has aborted for its own reason', () => {
    const own = new AbortController();
    const source = new AbortController();
    const any = new AbortOnAny([source.signal], own);
    expect(any.signal).toBe(own.signal);
    own.abort('own');
    source.abort('source');
    expect(own.signal.reason).toBe('own');
  });

  it('does not abort after release()', () => {
    const source = new AbortController();
    const any = new AbortOnAny([source.signal]);
    any.release();
    source.abort('late');
    expect(any.signal.aborted).toBe(false);
  });
});
