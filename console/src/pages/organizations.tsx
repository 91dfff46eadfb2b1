import { useState } from 'preact/hooks';
import { get, put, type List } from '../api';
import type { Organization } from '../main';
import { href } from '../router';
import { ErrorNote, Field, Loading, Page, formatDate, formatNumber, useLoad } from '../ui';

/** Every organization (platform administrators only): create one, set its limit and budget. */
export function OrganizationsPage() {
  const list = useLoad(() => get<List<Organization>>('/admin/v1/organizations'), []);
  const [slug, setSlug] = useState('');
  const [name, setName] = useState('');
  const [budget, setBudget] = useState('');
  const [rate, setRate] = useState('');
  const [error, setError] = useState<unknown>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      await put(`/admin/v1/organizations/${encodeURIComponent(slug.trim())}`, {
        name: name.trim() || undefined,
        monthlyTokenBudget: budget === '' ? null : Number(budget),
        rateLimitPerMinute: rate === '' ? null : Number(rate),
      });
      setSlug('');
      setName('');
      list.reload();
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <Page title="Organizations">
      <form class="panel filters" onSubmit={submit} aria-label="Create or update an organization">
        <Field id="org-slug" label="Slug">
          <input id="org-slug" required value={slug} onInput={(e) => setSlug(e.currentTarget.value)} />
        </Field>
        <Field id="org-name" label="Name">
          <input id="org-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Field id="org-budget" label="Monthly token budget (empty: none)">
          <input
            id="org-budget"
            type="number"
            min={0}
            value={budget}
            onInput={(e) => setBudget(e.currentTarget.value)}
          />
        </Field>
        <Field id="org-rate" label="Requests per minute (empty: default)">
          <input
            id="org-rate"
            type="number"
            min={1}
            value={rate}
            onInput={(e) => setRate(e.currentTarget.value)}
          />
        </Field>
        <button type="submit">Save organization</button>
        <ErrorNote error={error} />
      </form>
      <Loading when={list.loading && list.data === undefined} />
      <ErrorNote error={list.error} />
      <table>
        <caption class="sr-only">Organizations</caption>
        <thead>
          <tr>
            <th scope="col">Slug</th>
            <th scope="col">Name</th>
            <th scope="col" class="num">
              Rate limit
            </th>
            <th scope="col" class="num">
              Monthly budget
            </th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {(list.data?.data ?? []).map((org) => (
            <tr key={org.id}>
              <td>
                <a href={href('org', org.slug, 'assistants')}>{org.slug}</a>
              </td>
              <td>{org.name}</td>
              <td class="num">
                {org.rateLimitPerMinute === null ? 'default' : `${org.rateLimitPerMinute}/min`}
              </td>
              <td class="num">
                {org.monthlyTokenBudget === null ? 'none' : formatNumber(org.monthlyTokenBudget)}
              </td>
              <td>{formatDate(org.createdAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Page>
  );
}
