import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { get, type List } from './api';
import { AssistantsPage } from './pages/assistants';
import { AuditPage } from './pages/audit';
import { ConversationsPage } from './pages/conversations';
import { KeysPage } from './pages/keys';
import { OrganizationsPage } from './pages/organizations';
import { SignInPage } from './pages/sign-in';
import { ToolsPage } from './pages/tools';
import { UsagePage } from './pages/usage';
import { href, useRoute } from './router';
import { onSessionChange, signOut, startSessionWatch, type Session } from './session';
import { ErrorNote, Loading, useLoad } from './ui';
import './styles.css';

export interface Organization {
  id: string;
  slug: string;
  name: string;
  rateLimitPerMinute: number | null;
  monthlyTokenBudget: number | null;
  secretEnvGrants: string[];
  ssrfAllowlist: string[];
  createdAt: string;
}

const ORG_PAGES = [
  ['assistants', 'Assistants'],
  ['tools', 'Tools and gateways'],
  ['keys', 'API keys'],
  ['usage', 'Usage and cost'],
  ['conversations', 'Conversations'],
  ['audit', 'Audit log'],
] as const;

function App() {
  const [session, setSession] = useState<Session | null>(() => startSessionWatch());
  useEffect(() => onSessionChange(setSession), []);
  if (session === null) return <SignInPage />;
  return <Console session={session} />;
}

function Console({ session }: { session: Session }) {
  const route = useRoute();
  const orgs = useLoad(() => get<List<Organization>>('/admin/v1/organizations'), [session.credential]);
  const list = orgs.data?.data ?? [];
  const own = session.role === 'organization' ? list[0] : undefined;
  // An organization admin lands on its own organization; the platform on the list of them all.
  useEffect(() => {
    if (route.page !== 'home' || orgs.data === undefined) return;
    location.hash = own ? href('org', own.slug, 'assistants') : href('organizations');
  }, [route.page, orgs.data, own]);
  const orgRef = route.org;
  const org = list.find((candidate) => candidate.slug === orgRef || candidate.id === orgRef);
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Switchboard console</span>
        <span class="who" data-testid="who">
          {session.role === 'platform'
            ? 'Platform administrator: every organization'
            : `Organization administrator: ${own?.name ?? '…'} only`}
        </span>
        <button type="button" class="secondary" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <nav aria-label="Main">
        <ul>
          {session.role === 'platform' ? (
            <li>
              <a
                href={href('organizations')}
                aria-current={route.page === 'organizations' ? 'page' : undefined}
              >
                Organizations
              </a>
            </li>
          ) : null}
          {(org ?? own) !== undefined
            ? ORG_PAGES.map(([page, label]) => (
                <li key={page}>
                  <a
                    href={href('org', (org ?? own)!.slug, page)}
                    aria-current={route.page === page && route.org !== undefined ? 'page' : undefined}
                  >
                    {label}
                  </a>
                </li>
              ))
            : null}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        <Loading when={orgs.loading && orgs.data === undefined} />
        <ErrorNote error={orgs.error} />
        {orgs.data !== undefined ? (
          <Body session={session} org={org} orgRef={orgRef} page={route.page} />
        ) : null}
      </main>
    </div>
  );
}

function Body(props: { session: Session; org?: Organization; orgRef?: string; page: string }) {
  const { session, org, orgRef, page } = props;
  if (page === 'organizations' && session.role === 'platform') return <OrganizationsPage />;
  if (orgRef === undefined) return null;
  // Not in the list the API gave this credential: the same answer as for one that does not exist.
  if (org === undefined)
    return <ErrorNote error={new Error('Not found (or not visible to this credential).')} />;
  if (page === 'tools') return <ToolsPage org={org} />;
  if (page === 'keys') return <KeysPage org={org} />;
  if (page === 'usage') return <UsagePage org={org} />;
  if (page === 'conversations') return <ConversationsPage org={org} session={session} />;
  if (page === 'audit') return <AuditPage org={org} session={session} />;
  return <AssistantsPage org={org} />;
}

render(<App />, document.getElementById('app')!);
