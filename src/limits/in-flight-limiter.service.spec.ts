import { ApiError } from '../common/errors/error-catalogue.js';
import { loadConfig } from '../config/app-config.js';
import { LifecycleState } from '../lifecycle/lifecycle.state.js';
import type { Metrics } from '../metrics/metrics.service.js';
import { InFlightLimiter } from './in-flight-limiter.service.js';

function setup(max: number) {
  const shed: string[] = [];
  const metrics = { shed: (reason: string) => shed.push(reason), responsesInFlight: () => undefined };
  const lifecycle = new LifecycleState();
  const limiter = new InFlightLimiter(
    loadConfig({ MAX_IN_FLIGHT_RESPONSES: String(max) }),
    lifecycle,
    metrics as unknown as Metrics,
  );
  return { limiter, lifecycle, shed };
}

describe('InFlightLimiter', () => {
  it('refuses beyond the cap and takes requests again once a slot is released', () => {
    const { limiter, shed } = setup(2);
    const first = limiter.acquire();
    limiter.acquire();
    expect(limiter.tryAcquire()).toBeNull();
    let refusal: unknown;
    try {
      limiter.acquire();
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(ApiError);
    expect(refusal).toMatchObject({
      code: 'service_overloaded',
      status: 503,
      headers: { 'Retry-After': '1' },
    });
    expect(shed).toEqual(['overload', 'overload']);

    first();
    first(); // a second release of the same slot changes nothing
    expect(limiter.inFlight).toBe(1);
    expect(limiter.tryAcquire()).not.toBeNull();
    expect(limiter.tryAcquire()).toBeNull();
  });

  it('refuses new responses once the listener has closed for shutdown', () => {
    const { limiter, lifecycle, shed } = setup(10);
    lifecycle.beginShutdown();
    expect(limiter.tryAcquire()).not.toBeNull();
    lifecycle.stopAccepting();
    expect(() => limiter.acquire()).toThrow(/shutting down/);
    expect(shed).toEqual(['shutdown']);
  });
});

describe('InFlightLimiter: organization shares', () => {
  function withShare(max: number, share: number) {
    const shed: string[] = [];
    const metrics = { shed: (reason: string) => shed.push(reason), responsesInFlight: () => undefined };
    const limiter = new InFlightLimiter(
      loadConfig({ MAX_IN_FLIGHT_RESPONSES: String(max), MAX_IN_FLIGHT_PER_ORGANIZATION: String(share) }),
      new LifecycleState(),
      metrics as unknown as Metrics,
    );
    return { limiter, shed };
  }

  it('refuses an organization at its share with 429 when no headroom is left, while another organization is admitted', () => {
    const { limiter, shed } = withShare(4, 2);
    const first = limiter.acquireFor('org-a');
    limiter.acquireFor('org-a');
    let refusal: unknown;
    try {
      limiter.acquireFor('org-a');
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toMatchObject({
      code: 'concurrency_limit_exceeded',
      status: 429,
      headers: { 'Retry-After': '1' },
    });
    expect(limiter.inFlight).toBe(2); // the refused request gave its replica slot back
    expect(() => limiter.acquireFor('org-b')).not.toThrow();
    expect(shed).toEqual(['organization']);
    first();
    first();
    expect(limiter.heldBy('org-a')).toBe(1);
    expect(() => limiter.acquireFor('org-a')).not.toThrow();
  });

  it('lets an organization alone exceed its share up to all but one share of the replica', () => {
    const { limiter, shed } = withShare(10, 3);
    const held = Array.from({ length: 7 }, () => limiter.acquireFor('org-a'));
    expect(limiter.heldBy('org-a')).toBe(7); // past its share of 3: the others still find 3 free
    expect(() => limiter.acquireFor('org-a')).toThrow(
      expect.objectContaining({ code: 'concurrency_limit_exceeded', status: 429 }),
    );
    expect(limiter.inFlight).toBe(7);
    // The reserved headroom serves the others, up to the replica's cap.
    for (let i = 0; i < 3; i++) expect(() => limiter.acquireFor(`org-${i}`)).not.toThrow();
    expect(() => limiter.acquireFor('org-b')).toThrow(/capacity/);
    expect(shed).toEqual(['organization', 'overload']);
    // An organization under its share is admitted however little headroom is left.
    held[0]();
    expect(() => limiter.acquireFor('org-b')).not.toThrow();
  });

  it('counts work admitted earlier even past the cap, so new requests are shed meanwhile', () => {
    const { limiter } = withShare(2, 2);
    const running = limiter.occupy('org-a');
    limiter.occupy('org-b');
    limiter.occupy('org-b');
    expect(limiter.inFlight).toBe(3);
    expect(limiter.tryAcquire()).toBeNull();
    expect(() => limiter.admitOrganization('org-b')).toThrow(/share/);
    running();
    expect(limiter.heldBy('org-a')).toBe(0);
    expect(limiter.inFlight).toBe(2);
  });
});
