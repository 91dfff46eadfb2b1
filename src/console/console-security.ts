/**
 * The console's Content-Security-Policy: only its own scripts, styles, fonts and images, API
 * calls to its own origin, no inline script or style element, no frames, no forms posting
 * elsewhere. The build has no inline script (Vite's module preload polyfill is off), and styles
 * set from script go through the CSSOM, which `style-src` does not restrict.
 *
 * With sign-in through the identity provider (CONSOLE_OIDC_CLIENT_ID), the browser itself reads
 * the provider's discovery document and redeems the authorization code at its token endpoint
 * (PKCE: there is no server-side session to do it), so `connect-src` names the issuer's origin
 * too, and nothing else. Going to the provider's sign-in page is a navigation, which the policy
 * does not govern.
 */
export function consoleCsp(issuerOrigin?: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    issuerOrigin === undefined ? "connect-src 'self'" : `connect-src 'self' ${issuerOrigin}`,
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Headers on every console answer. */
export function consoleHeaders(issuerOrigin?: string): Readonly<Record<string, string>> {
  return {
    'Content-Security-Policy': consoleCsp(issuerOrigin),
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
  };
}
