import { useState } from 'preact/hooks';
import { get, put, type List } from '../api';
import { ListView, names, parseJsonField, useApiForm, useConfirmedDelete } from '../list';
import type { Organization } from '../main';
import { ErrorNote, Field, Page, useLoad } from '../ui';

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
  const { error, remove } = useConfirmedDelete();
  const deleteButton = (kind: string, name: string, reload: () => void) => (
    <button
      type="button"
      class="danger"
      onClick={() =>
        void remove(`the ${kind} "${name}"`, `${base}/${kind}s/${encodeURIComponent(name)}`, reload)
      }
    >
      Delete
      <span class="sr-only">
        {' '}
        {kind} {name}
      </span>
    </button>
  );
  return (
    <Page title={`Tools and MCP gateways of ${org.name}`}>
      <ToolForm base={base} onSaved={tools.reload} />
      <ErrorNote error={error} />
      <ListView
        list={tools}
        empty="No tools yet."
        caption="Tools"
        showCaption
        testId="tools-table"
        rowKey={(tool) => tool.id}
        columns={[
          { label: 'Name', cell: (tool) => tool.name },
          { label: 'Kind', cell: (tool) => tool.kind },
          { label: 'Description', cell: (tool) => tool.description ?? '—' },
          { label: '', cell: (tool) => deleteButton('tool', tool.name, tools.reload) },
        ]}
      />
      <GatewayForm base={base} onSaved={gateways.reload} />
      <ListView
        list={gateways}
        empty="No MCP gateways yet."
        caption="MCP gateways"
        showCaption
        testId="gateways-table"
        rowKey={(gateway) => gateway.id}
        columns={[
          { label: 'Name', cell: (gateway) => gateway.name },
          { label: 'Tools', cell: (gateway) => gateway.tools.join(', ') },
          { label: 'URL', cell: (gateway) => (gateway.url ? <code>{gateway.url}</code> : '—') },
          { label: '', cell: (gateway) => deleteButton('gateway', gateway.name, gateways.reload) },
        ]}
      />
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
  const { errors, submit, formError } = useApiForm(TOOL_FIELDS);
  const save = submit(async () => {
    const parsed = parseJsonField(config, 'config');
    await put(`${base}/tools/${encodeURIComponent(name.trim())}`, {
      kind,
      config: parsed,
      description: description || undefined,
    });
    onSaved();
  });
  return (
    <form class="panel" onSubmit={save} aria-label="Create or update a tool">
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
      <ErrorNote error={formError} />
      <button type="submit">Save tool</button>
    </form>
  );
}

function GatewayForm({ base, onSaved }: { base: string; onSaved: () => void }) {
  const [name, setName] = useState('');
  const [tools, setTools] = useState('*');
  const { submit, formError } = useApiForm([]);
  const save = submit(async () => {
    await put(`${base}/gateways/${encodeURIComponent(name.trim())}`, { tools: names(tools) });
    onSaved();
  });
  return (
    <form class="panel filters" onSubmit={save} aria-label="Create or update an MCP gateway">
      <Field id="gateway-name" label="Gateway name">
        <input id="gateway-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </Field>
      <Field id="gateway-tools" label="Tools (comma-separated, * for all)">
        <input id="gateway-tools" required value={tools} onInput={(e) => setTools(e.currentTarget.value)} />
      </Field>
      <button type="submit">Save gateway</button>
      <ErrorNote error={formError} />
    </form>
  );
}
