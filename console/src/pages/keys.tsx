import { useState } from 'preact/hooks';
import { get, post, type List } from '../api';
import type { Organization } from '../main';
import { Empty, ErrorNote, Field, Loading, Page, formatDate, useLoad } from '../ui';

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
      <Loading when={list.loading && list.data === undefined} />
      <ErrorNote error={list.error} />
      <Empty when={list.data?.data.length === 0}>No keys.</Empty>
      {list.data?.data.length ? (
        <table>
          <caption class="sr-only">API keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Scopes</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {list.data.data.map((key) => (
              <tr key={key.id} data-key-id={key.id}>
                <td>{key.name}</td>
                <td>
                  <code>{key.hint}</code>
                </td>
                <td>{key.scopes.join(', ')}</td>
                <td>{formatDate(key.createdAt)}</td>
                <td>{formatDate(key.lastUsedAt)}</td>
                <td>
                  {key.revokedAt !== null ? (
                    <span class="badge">Revoked {formatDate(key.revokedAt)}</span>
                  ) : (
                    <button type="button" class="danger" onClick={() => void revoke(key)}>
                      Revoke<span class="sr-only"> {key.name}</span>
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </Page>
  );
}

function IssueForm(props: { base: string; onIssued: (key: ApiKey & { secret: string }) => void }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>(['full_access']);
  const [error, setError] = useState<unknown>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      props.onIssued(await post<ApiKey & { secret: string }>(props.base, { name: name.trim(), scopes }));
      setName('');
    } catch (failure) {
      setError(failure);
    }
  };
  const toggle = (scope: string, on: boolean) =>
    setScopes((current) => (on ? [...current, scope] : current.filter((other) => other !== scope)));
  return (
    <form class="panel" onSubmit={submit} aria-label="Issue a key">
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
      <ErrorNote error={error} />
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
