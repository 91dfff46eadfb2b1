import { ApiError } from './error-catalogue.js';

/**
 * Refuses to store one more object when the organization already holds `current` of them and
 * its quota (`variable`, 0 = none) allows no more: 409 `quota_exceeded`, nothing written. Every
 * path that creates one (admin API, `apply`, CLI) goes through the feature's service, which calls
 * this inside the transaction of the write.
 */
export function assertUnderQuota(current: number, quota: number, what: string, variable: string): void {
  if (quota === 0 || current < quota) return;
  throw new ApiError(
    'quota_exceeded',
    `The quota of ${quota} ${what} (${variable}) is reached; delete one first, or ask the platform team to raise it`,
  );
}
