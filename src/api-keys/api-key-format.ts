import { hash, randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_LENGTH = 43; // ~256 bits of entropy
const CURRENT_FORMAT = /^swb_[0-9A-Za-z]{40,100}$/;
const LEGACY_FORMAT = /^[0-9a-f]{64}$/;

/** A new key: `swb_` and 43 random base62 characters. */
export function generateApiKey(): string {
  // Rejection sampling keeps every character uniformly distributed.
  let secret = '';
  while (secret.length < SECRET_LENGTH) {
    for (const byte of randomBytes(64)) {
      if (byte < 248 && secret.length < SECRET_LENGTH) secret += BASE62[byte % 62];
    }
  }
  return `swb_${secret}`;
}

/** True for a string shaped like a current or an earlier-format key; checked before any lookup. */
export function isWellFormedApiKey(candidate: string): boolean {
  return CURRENT_FORMAT.test(candidate) || LEGACY_FORMAT.test(candidate);
}

export function isSha256Hex(candidate: string): boolean {
  return LEGACY_FORMAT.test(candidate);
}

/**
 * The key's SHA-256 (hex), as stored. Every authenticated request hashes its key: `crypto.hash`
 * is the one-shot form (no Hash object, no stream machinery), a third of `createHash`'s cost.
 */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** The non-secret hint shown in listings: prefix and the last four characters. */
export function apiKeyHint(key: string): string {
  return key.startsWith('swb_') ? `swb_…${key.slice(-4)}` : `…${key.slice(-4)}`;
}
