import { useState } from 'preact/hooks';
import { get, put, type List } from '../api';
import type { Organization } from '../main';
import { href } from '../router';
import { ListView, useApiForm } from '../list';
import { ErrorNote, Field, Page, formatDate, formatNumber, useLoad } from '../ui';

/** Every organization (platform administrators only): create one, set its limit and budget. */
export function OrganizationsPage() {
  const list = useLoad(() => get<List<Organization>>('/admin/v1/organizations'), []);
  const [slug, setSlug] = useState('');
  const [name, setName] = useState('');
  const [budget, setBudget] = useState('');
  const [rate, setRate] = useState('');
  const { submit, formError } = useApiForm([]);
  const save = submit(async () => {
    await put(`/admin/v1/organizations/${encodeURIComponent(slug.trim())}`, {
      name: name.trim() || undefined,
      monthlyTokenBudget: budget === '' ? null : Number(budget),
      rateLimitPerMinute: rate === '' ? null : Number(rate),
    });
    setSlug('');
    setName('');
    list.reload();
  });
  return (
    <Page title="Organizations">
      <form class="panel filters" onSubmit={save} aria-label="Create or update an organization">
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
        <ErrorNote error={formError} />
      </form>
      <ListView
        list={list}
        empty="No organizations yet."
        caption="Organizations"
        rowKey={(org) => org.id}
        columns={[
          { label: 'Slug', cell: (org) => <a href={href('org', org.slug, 'assistants')}>{org.slug}</a> },
          { label: 'Name', cell: (org) => org.name },
          {
            label: 'Rate limit',
            numeric: true,
            cell: (org) => (org.rateLimitPerMinute === null ? 'default' : `${org.rateLimitPerMinute}/min`),
          },
          {
            label: 'Monthly budget',
            numeric: true,
            cell: (org) => (org.monthlyTokenBudget === null ? 'none' : formatNumber(org.monthlyTokenBudget)),
          },
          { label: 'Created', cell: (org) => formatDate(org.createdAt) },
        ]}
      />
    </Page>
  );
}
