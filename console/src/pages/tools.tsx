import { useState } from 'preact/hooks';
import { ApiFailure, del, fieldOf, get, put, type List } from '../api';
import type { Organization } from '../main';
import { Empty, ErrorNote, Field, Loading, Page, useLoad } from '../ui';

interface Tool {
  id: string;
  name: string;
  kind: string;
  description: string | null;
  config: Record<string, unknown>;
}

interface Gateway {
  id: string;
  name: string;
  tools: string[];
  url: string | null;
}

const KINDS = ['rest', 'mcp', 'web_search'] as const;
const TOOL_FIELDS = ['name', 'kind', 'config', 'description'] as const;

/** The tool catalogue and the MCP gateways of one organization: upsert by name, delete. */
export function ToolsPage({ org }: { org: Organization }) {
  const base = `/admin/v1/organizations/${encodeURIComponent(org.slug)}`;
  const tools = useLoad(() => get<List<Tool>>(`${base}/tools`), [org.slug]);
  const gateways = useLoad(() => get<List<Gateway>>(`${base}/gateways`), [org.slug]);
  const [error, setError] = useState<unknown>(null);
  const remove = async (what: string, path: string, reload: () => void) => {
    if (!window.confirm(`Delete ${what}?`)) return;
    setError(null);
    try {
      await del(path);
      reload();
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <Page title={`Tools and MCP gateways of ${org.name}`}>
      <ToolForm base={base} onSaved={tools.reload} />
      <ErrorNote error={error ?? tools.error ?? gateways.error} />
      <Loading when={tools.loading && tools.data === undefined} />
      <Empty when={tools.data?.data.length === 0}>No tools yet.</Empty>
      {tools.data?.data.length ? (
        <table data-testid="tools-table">
          <caption>Tools</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Kind</th>
              <th scope="col">Description</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {tools.data.data.map((tool) => (
              <tr key={tool.id}>
                <td>{tool.name}</td>
                <td>{tool.kind}</td>
                <td>{tool.description ?? '—'}</td>
                <td>
                  <button
                    type="button"
                    class="danger"
                    onClick={() =>
                      void remove(
                        `the tool "${tool.name}"`,
                        `${base}/tools/${encodeURIComponent(tool.name)}`,
                        tools.reload,
                      )
                    }
                  >
                    Delete<span class="sr-only"> tool {tool.name}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <GatewayForm base={base} onSaved={gateways.reload} />
      {gateways.data?.data.length ? (
        <table data-testid="gateways-table">
          <caption>MCP gateways</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Tools</th>
              <th scope="col">URL</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {gateways.data.data.map((gateway) => (
              <tr key={gateway.id}>
                <td>{gateway.name}</td>
                <td>{gateway.tools.join(', ')}</td>
                <td>{gateway.url ? <code>{gateway.url}</code> : '—'}</td>
                <td>
                  <button
                    type="button"
                    class="danger"
                    onClick={() =>
                      void remove(
                        `the gateway "${gateway.name}"`,
                        `${base}/gateways/${encodeURIComponent(gateway.name)}`,
                        gateways.reload,
                      )
                    }
                  >
                    Delete<span class="sr-only"> gateway {gateway.name}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </Page>
  );
}

function ToolForm({ base, onSaved }: { base: string; onSaved: () => void }) {
  const [name, setName] = useState('');
  const [kind, setKind] = useState<string>('rest');
  const [description, setDescription] = useState('');
  const [config, setConfig] = useState(
    '{\n  "method": "GET",\n  "urlTemplate": "https://example.com/{id}"\n}',
  );
  const [errors, setErrors] = useState<Partial<Record<(typeof TOOL_FIELDS)[number] | 'form', string>>>({});
  const submit = async (event: Event) => {
    event.preventDefault();
    let parsed: unknown;
    try {
      parsed = JSON.parse(config);
    } catch {
      setErrors({ config: 'config: not valid JSON' });
      return;
    }
    setErrors({});
    try {
      await put(`${base}/tools/${encodeURIComponent(name.trim())}`, {
        kind,
        config: parsed,
        description: description || undefined,
      });
      onSaved();
    } catch (failure) {
      const message = failure instanceof Error ? failure.message : String(failure);
      const field = failure instanceof ApiFailure ? fieldOf(message, TOOL_FIELDS) : null;
      setErrors({ [field ?? 'form']: message });
    }
  };
  return (
    <form class="panel" onSubmit={submit} aria-label="Create or update a tool">
      <h2>Create or update a tool</h2>
      <div class="filters">
        <Field id="tool-name" label="Tool name" error={errors.name}>
          <input id="tool-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Field id="tool-kind" label="Kind" error={errors.kind}>
          <select id="tool-kind" value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
            {KINDS.map((option) => (
              <option key={option} value={option}>
                {option}
              </option>
            ))}
          </select>
        </Field>
        <Field id="tool-description" label="Description" error={errors.description}>
          <input
            id="tool-description"
            value={description}
            onInput={(e) => setDescription(e.currentTarget.value)}
          />
        </Field>
      </div>
      <Field id="tool-config" label="Configuration (JSON, docs/tools.md)" error={errors.config}>
        <textarea
          id="tool-config"
          class="mono"
          rows={5}
          value={config}
          onInput={(e) => setConfig(e.currentTarget.value)}
        />
      </Field>
      <ErrorNote error={errors.form ? new Error(errors.form) : null} />
      <button type="submit">Save tool</button>
    </form>
  );
}

function GatewayForm({ base, onSaved }: { base: string; onSaved: () => void }) {
  const [name, setName] = useState('');
  const [tools, setTools] = useState('*');
  const [error, setError] = useState<unknown>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      const names = tools
        .split(',')
        .map((tool) => tool.trim())
        .filter(Boolean);
      await put(`${base}/gateways/${encodeURIComponent(name.trim())}`, { tools: names });
      onSaved();
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <form class="panel filters" onSubmit={submit} aria-label="Create or update an MCP gateway">
      <Field id="gateway-name" label="Gateway name">
        <input id="gateway-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </Field>
      <Field id="gateway-tools" label="Tools (comma-separated, * for all)">
        <input id="gateway-tools" required value={tools} onInput={(e) => setTools(e.currentTarget.value)} />
      </Field>
      <button type="submit">Save gateway</button>
      <ErrorNote error={error} />
    </form>
  );
}
