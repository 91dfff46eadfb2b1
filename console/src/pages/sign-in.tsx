import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, bindSession, get } from '../api';
import { finishOidcSignIn, loadOidcSettings, startOidcSignIn, type OidcSettings } from '../oidc';
import { IDLE_TIMEOUT_MS, signIn } from '../session';
import { ErrorNote, Field } from '../ui';

const unbound = () => undefined;

/** Checks a credential with one read of the admin API before the console opens with it. */
async function verifyAndSignIn(value: string): Promise<void> {
  try {
    bindSession(value, unbound, unbound);
    await get('/admin/v1/organizations');
    signIn(value);
  } catch (failure) {
    bindSession(null, unbound, unbound);
    throw failure instanceof ApiFailure && failure.status === 403
      ? new Error('This credential is valid but has no admin scope.')
      : failure;
  }
}

/**
 * Sign-in with an admin credential: an organization's API key with the `admin` scope, or a
 * platform administrator's access token, pasted or (with CONSOLE_OIDC_CLIENT_ID) obtained from
 * the identity provider with PKCE (oidc.ts). It is checked with one read of the admin API before
 * the console opens, and kept in this tab's session storage only.
 */
export function SignInPage() {
  const [credential, setCredential] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [oidc, setOidc] = useState<OidcSettings | null>(null);
  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => {
    void run(async () => {
      const settings = await loadOidcSettings();
      setOidc(settings);
      const token = settings === null ? null : await finishOidcSignIn(settings);
      if (token !== null) await verifyAndSignIn(token);
    });
  }, []);
  const submit = (event: Event) => {
    event.preventDefault();
    void run(() => verifyAndSignIn(credential.trim()));
  };
  return (
    <main id="main" class="sign-in">
      <h1>Switchboard console</h1>
      {oidc !== null ? (
        <section class="panel" aria-label="Platform administrators">
          <p class="muted">Platform administrators sign in with the identity provider.</p>
          <button type="button" disabled={busy} onClick={() => void run(() => startOidcSignIn(oidc))}>
            Sign in with the identity provider
          </button>
        </section>
      ) : null}
      <form onSubmit={submit} aria-describedby="sign-in-about">
        <p id="sign-in-about" class="muted">
          Sign in with an organization admin key (scope <code>admin</code>) or a platform administrator token.
          It is kept in this tab only and forgotten after {IDLE_TIMEOUT_MS / 60000} idle minutes.
        </p>
        <Field id="credential" label="Admin API key or token">
          <input
            id="credential"
            name="credential"
            type="password"
            autoComplete="off"
            required
            value={credential}
            onInput={(event) => setCredential(event.currentTarget.value)}
          />
        </Field>
        <ErrorNote error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
