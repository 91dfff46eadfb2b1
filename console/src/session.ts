import { bindSession } from './api';

/** Session storage: gone when the tab closes, never sent by the browser on its own like a cookie. */
const STORAGE_KEY = 'switchboard.console.credential';
const ACTIVITY_KEY = 'switchboard.console.activity';
/** Signed out after this long without a click, key press or API call. */
export const IDLE_TIMEOUT_MS = 15 * 60 * 1000;

export type Role = 'platform' | 'organization';

export interface Session {
  credential: string;
  role: Role;
}

/**
 * How the admin API reads a credential (docs/admin-api.md, "Who may call it"): one shaped like an
 * API key (`swb_…` or 64 hex characters) is an organization's admin key; anything else is an
 * identity-provider token, which only a platform administrator's can pass.
 */
export function roleOf(credential: string): Role {
  return /^swb_/.test(credential) || /^[0-9a-f]{64}$/i.test(credential) ? 'organization' : 'platform';
}

let listeners: ((session: Session | null) => void)[] = [];
let timer: number | undefined;

export function currentSession(): Session | null {
  const credential = sessionStorage.getItem(STORAGE_KEY);
  const last = Number(sessionStorage.getItem(ACTIVITY_KEY) ?? 0);
  if (credential === null || Date.now() - last > IDLE_TIMEOUT_MS) {
    signOut(false);
    return null;
  }
  return { credential, role: roleOf(credential) };
}

function touch(): void {
  if (sessionStorage.getItem(STORAGE_KEY) !== null) sessionStorage.setItem(ACTIVITY_KEY, String(Date.now()));
}

export function signIn(credential: string): Session {
  sessionStorage.setItem(STORAGE_KEY, credential);
  touch();
  bindSession(credential, touch, () => signOut());
  const session = { credential, role: roleOf(credential) };
  notify(session);
  return session;
}

export function signOut(announce = true): void {
  sessionStorage.removeItem(STORAGE_KEY);
  sessionStorage.removeItem(ACTIVITY_KEY);
  bindSession(
    null,
    () => undefined,
    () => undefined,
  );
  if (announce) notify(null);
}

export function onSessionChange(listener: (session: Session | null) => void): () => void {
  listeners.push(listener);
  return () => {
    listeners = listeners.filter((other) => other !== listener);
  };
}

function notify(session: Session | null): void {
  for (const listener of listeners) listener(session);
}

/** Restores a session after a reload and watches for idleness. */
export function startSessionWatch(): Session | null {
  const session = currentSession();
  if (session !== null) bindSession(session.credential, touch, () => signOut());
  for (const event of ['pointerdown', 'keydown']) document.addEventListener(event, touch, { passive: true });
  window.clearInterval(timer);
  timer = window.setInterval(() => {
    if (sessionStorage.getItem(STORAGE_KEY) !== null && currentSession() === null) notify(null);
  }, 30_000);
  return session;
}
