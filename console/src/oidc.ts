/**
 * Sign-in of platform administrators with the identity provider: OAuth 2.0 authorization code
 * with PKCE (S256), run by the browser itself as a public client (no secret, no server-side
 * session). Only the access token is kept, as a pasted one is (session.ts); the verifier and state
 * live in this tab's session storage from the redirect out until the redirect back.
 */
export interface OidcSettings {
  issuer: string;
  clientId: string;
  scope: string;
}

interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
}

interface Pending {
  verifier: string;
  state: string;
  redirectUri: string;
}

const PENDING_KEY = 'switchboard.console.oidc-pending';

/** What the service says about this sign-in (`config.json` beside the page); null when it is off. */
export async function loadOidcSettings(): Promise<OidcSettings | null> {
  const res = await fetch(new URL('config.json', document.baseURI), {
    cache: 'no-store',
    credentials: 'omit',
  });
  if (!res.ok) return null;
  return ((await res.json()) as { oidc: OidcSettings | null }).oidc;
}

async function discover(issuer: string): Promise<Discovery> {
  const res = await fetch(`${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`, {
    credentials: 'omit',
    cache: 'no-store',
  });
  const document = (await res.json()) as Discovery;
  // RFC 8414: the document must name the issuer it was fetched for.
  if (!res.ok || document.issuer !== issuer)
    throw new Error('The identity provider could not be discovered.');
  return document;
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

const randomText = (bytes: number) => base64url(crypto.getRandomValues(new Uint8Array(bytes)));

/** The console's own address, without query or fragment: the redirect URI registered for it. */
const redirectUri = () => `${location.origin}${location.pathname}`;

/** Leaves for the provider's sign-in page with a fresh verifier's challenge and a state. */
export async function startOidcSignIn(settings: OidcSettings): Promise<void> {
  const discovery = await discover(settings.issuer);
  const pending: Pending = { verifier: randomText(32), state: randomText(16), redirectUri: redirectUri() };
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(pending.verifier));
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  const target = new URL(discovery.authorization_endpoint);
  target.search = new URLSearchParams({
    response_type: 'code',
    client_id: settings.clientId,
    redirect_uri: pending.redirectUri,
    scope: settings.scope,
    state: pending.state,
    code_challenge: base64url(new Uint8Array(digest)),
    code_challenge_method: 'S256',
  }).toString();
  location.assign(target.href);
}

/**
 * The provider's redirect back (`?code=…&state=…`, or `?error=…`): redeems the code with the
 * verifier and returns the access token; null when this page load is not such a redirect. The
 * code leaves the address bar at once, and a state this tab did not send is refused.
 */
export async function finishOidcSignIn(settings: OidcSettings): Promise<string | null> {
  const params = new URLSearchParams(location.search);
  if (!params.has('code') && !params.has('error')) return null;
  const stored = sessionStorage.getItem(PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  history.replaceState(null, '', `${location.pathname}${location.hash}`);
  if (params.has('error')) {
    throw new Error(
      `The identity provider refused: ${params.get('error_description') ?? params.get('error')}`,
    );
  }
  const pending = stored === null ? null : (JSON.parse(stored) as Pending);
  if (pending === null || params.get('state') !== pending.state) {
    throw new Error('This sign-in answer is not for a sign-in started in this tab; sign in again.');
  }
  const discovery = await discover(settings.issuer);
  const res = await fetch(discovery.token_endpoint, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: params.get('code') ?? '',
      redirect_uri: pending.redirectUri,
      client_id: settings.clientId,
      code_verifier: pending.verifier,
    }),
    credentials: 'omit',
    cache: 'no-store',
  });
  const body = (await res.json()) as { access_token?: unknown; error?: string };
  if (!res.ok || typeof body.access_token !== 'string') {
    throw new Error(`The identity provider issued no token (${body.error ?? `HTTP ${res.status}`}).`);
  }
  return body.access_token;
}
