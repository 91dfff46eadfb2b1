import { useEffect, useState } from 'preact/hooks';
import { get, type List } from '../api';
import type { Organization } from '../main';
import type { Session } from '../session';
import { Empty, ErrorNote, Field, Loading, Page, formatDate } from '../ui';
import { AuditDiff } from './audit-diff';

export interface AuditRow {
  id: string;
  organizationId: string | null;
  actor: { type: string; id: string; issuer: string | null };
  action: string;
  resourceType: string;
  resourceId: string;
  before: unknown;
  after: unknown;
  requestId: string | null;
  createdAt: string;
}

const ACTIONS = ['', 'created', 'updated', 'revoked', 'deleted', 'erased', 'denied'];

/**
 * The audit log (GET /admin/v1/audit-log), newest first, a page of 100 at a time. The API filters
 * by organization only, so actor, action, object and date filter the pages loaded so far; "Load
 * older" fetches the next page with the API's cursor.
 */
export function AuditPage({ org, session }: { org: Organization; session: Session }) {
  const [rows, setRows] = useState<AuditRow[]>([]);
  const [cursor, setCursor] = useState<string | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(false);
  const [filter, setFilter] = useState({ actor: '', action: '', object: '', from: '', to: '' });
  const [open, setOpen] = useState<string | null>(null);
  const load = async (after?: string) => {
    setLoading(true);
    try {
      const page = await get<List<AuditRow>>('/admin/v1/audit-log', {
        limit: 100,
        after,
        organization: session.role === 'platform' ? org.id : undefined,
      });
      setRows((current) => (after === undefined ? page.data : [...current, ...page.data]));
      setCursor(page.next_cursor ?? null);
    } catch (failure) {
      setError(failure);
    } finally {
      setLoading(false);
    }
  };
  useEffect(() => {
    setRows([]);
    void load();
  }, [org.id]);
  const shown = rows.filter(
    (row) =>
      (filter.actor === '' || `${row.actor.type}:${row.actor.id}`.includes(filter.actor)) &&
      (filter.action === '' || row.action === filter.action) &&
      (filter.object === '' || `${row.resourceType} ${row.resourceId}`.includes(filter.object)) &&
      (filter.from === '' || row.createdAt.slice(0, 10) >= filter.from) &&
      (filter.to === '' || row.createdAt.slice(0, 10) <= filter.to),
  );
  const set = (name: keyof typeof filter) => (event: Event) =>
    setFilter({ ...filter, [name]: (event.currentTarget as HTMLInputElement).value });
  return (
    <Page title={`Audit log of ${org.name}`}>
      <form class="panel filters" aria-label="Audit filters" onSubmit={(event) => event.preventDefault()}>
        <Field id="audit-actor" label="Actor">
          <input id="audit-actor" value={filter.actor} onInput={set('actor')} />
        </Field>
        <Field id="audit-action" label="Action">
          <select id="audit-action" value={filter.action} onChange={set('action')}>
            {ACTIONS.map((action) => (
              <option key={action} value={action}>
                {action || 'Any'}
              </option>
            ))}
          </select>
        </Field>
        <Field id="audit-object" label="Object (type or id)">
          <input id="audit-object" value={filter.object} onInput={set('object')} />
        </Field>
        <Field id="audit-from" label="From">
          <input id="audit-from" type="date" value={filter.from} onInput={set('from')} />
        </Field>
        <Field id="audit-to" label="To">
          <input id="audit-to" type="date" value={filter.to} onInput={set('to')} />
        </Field>
      </form>
      <ErrorNote error={error} />
      <Loading when={loading} />
      <Empty when={!loading && shown.length === 0}>No audit rows match.</Empty>
      {shown.length > 0 ? (
        <table data-testid="audit-table">
          <caption class="sr-only">Audit rows</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Actor</th>
              <th scope="col">Action</th>
              <th scope="col">Object</th>
              <th scope="col">
                <span class="sr-only">Details</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {shown.map((row) => (
              <>
                <tr key={row.id}>
                  <td>{formatDate(row.createdAt)}</td>
                  <td>
                    <code>
                      {row.actor.type}:{row.actor.id}
                    </code>
                  </td>
                  <td>{row.action}</td>
                  <td>
                    {row.resourceType} <code>{row.resourceId}</code>
                  </td>
                  <td>
                    <button
                      type="button"
                      class="secondary"
                      aria-expanded={open === row.id}
                      onClick={() => setOpen(open === row.id ? null : row.id)}
                    >
                      {open === row.id ? 'Hide' : 'Changes'}
                    </button>
                  </td>
                </tr>
                {open === row.id ? (
                  <tr key={`${row.id}-diff`}>
                    <td colSpan={5}>
                      <AuditDiff before={row.before} after={row.after} />
                    </td>
                  </tr>
                ) : null}
              </>
            ))}
          </tbody>
        </table>
      ) : null}
      {cursor ? (
        <button type="button" class="secondary" onClick={() => void load(cursor)}>
          Load older
        </button>
      ) : null}
    </Page>
  );
}
