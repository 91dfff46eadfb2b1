import { useState } from 'preact/hooks';
import { ApiFailure, bindSession, get } from '../api';
import { IDLE_TIMEOUT_MS, signIn } from '../session';
import { ErrorNote, Field } from '../ui';

/**
 * Sign-in with an admin credential: an organization's API key with the `admin` scope, or a
 * platform administrator's access token. It is checked with one read of the admin API before
 * the console opens, and kept in this tab's session storage only.
 */
export function SignInPage() {
  const [credential, setCredential] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const value = credential.trim();
    try {
      bindSession(
        value,
        () => undefined,
        () => undefined,
      );
      await get('/admin/v1/organizations');
      signIn(value);
    } catch (failure) {
      bindSession(
        null,
        () => undefined,
        () => undefined,
      );
      setError(
        failure instanceof ApiFailure && failure.status === 403
          ? new Error('This credential is valid but has no admin scope.')
          : failure,
      );
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="sign-in">
      <h1>Switchboard console</h1>
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
