import { useState } from 'preact/hooks';
import { get, post, type List } from '../api';
import type { Organization } from '../main';
import { ListView, useApiForm } from '../list';
import { ErrorNote, Field, Page, formatDate, useLoad } from '../ui';

interface ApiKey {
  id: string;
  name: string;
  hint: string;
  scopes: string[];
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** The scopes a key can carry (src/api-keys/entities/api-key.entity.ts, API_KEY_SCOPES). */
const SCOPES = ['full_access', 'assistant', 'user', 'admin'] as const;

export function KeysPage({ org }: { org: Organization }) {
  const base = `/admin/v1/organizations/${encodeURIComponent(org.slug)}/keys`;
  const list = useLoad(() => get<List<ApiKey>>(base), [org.slug]);
  const [issued, setIssued] = useState<(ApiKey & { secret: string }) | null>(null);
  const [error, setError] = useState<unknown>(null);
  const revoke = async (key: ApiKey) => {
    if (!window.confirm(`Revoke the key "${key.name}"? Callers using it are refused within seconds.`)) return;
    setError(null);
    try {
      await post(`${base}/${encodeURIComponent(key.id)}/revoke`);
      list.reload();
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <Page title={`API keys of ${org.name}`}>
      <IssueForm
        base={base}
        onIssued={(key) => {
          setIssued(key);
          list.reload();
        }}
      />
      {issued !== null ? (
        <Secret secret={issued.secret} name={issued.name} onClose={() => setIssued(null)} />
      ) : null}
      <ErrorNote error={error} />
      <ListView
        list={list}
        empty="No keys."
        caption="API keys"
        rowKey={(key) => key.id}
        rowAttributes={(key) => ({ 'data-key-id': key.id })}
        columns={[
          { label: 'Name', cell: (key) => key.name },
          { label: 'Key', cell: (key) => <code>{key.hint}</code> },
          { label: 'Scopes', cell: (key) => key.scopes.join(', ') },
          { label: 'Created', cell: (key) => formatDate(key.createdAt) },
          { label: 'Last used', cell: (key) => formatDate(key.lastUsedAt) },
          {
            label: 'Status',
            cell: (key) =>
              key.revokedAt !== null ? (
                <span class="badge">Revoked {formatDate(key.revokedAt)}</span>
              ) : (
                <button type="button" class="danger" onClick={() => void revoke(key)}>
                  Revoke<span class="sr-only"> {key.name}</span>
                </button>
              ),
          },
        ]}
      />
    </Page>
  );
}

function IssueForm(props: { base: string; onIssued: (key: ApiKey & { secret: string }) => void }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>(['full_access']);
  const { submit, formError } = useApiForm([]);
  const issue = submit(async () => {
    props.onIssued(await post<ApiKey & { secret: string }>(props.base, { name: name.trim(), scopes }));
    setName('');
  });
  const toggle = (scope: string, on: boolean) =>
    setScopes((current) => (on ? [...current, scope] : current.filter((other) => other !== scope)));
  return (
    <form class="panel" onSubmit={issue} aria-label="Issue a key">
      <h2>Issue a key</h2>
      <Field id="key-name" label="Name">
        <input id="key-name" required value={name} onInput={(event) => setName(event.currentTarget.value)} />
      </Field>
      <fieldset>
        <legend>Scopes</legend>
        {SCOPES.map((scope) => (
          <label key={scope} class="check">
            <input
              type="checkbox"
              name="scope"
              value={scope}
              checked={scopes.includes(scope)}
              onChange={(event) => toggle(scope, event.currentTarget.checked)}
            />
            {scope}
          </label>
        ))}
      </fieldset>
      <ErrorNote error={formError} />
      <button type="submit">Issue key</button>
    </form>
  );
}

/** The only time the secret is shown: the API never returns it again. */
function Secret(props: { secret: string; name: string; onClose: () => void }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(props.secret);
    setCopied(true);
  };
  return (
    <div class="panel notice" role="region" aria-label="New key secret">
      <p>
        The secret of <strong>{props.name}</strong>. Copy it now: it is not shown again.
      </p>
      <p>
        <code class="secret" data-testid="secret">
          {props.secret}
        </code>
      </p>
      <div class="row">
        <button type="button" onClick={() => void copy()}>
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" class="secondary" onClick={props.onClose}>
          Done
        </button>
      </div>
    </div>
  );
}
