import { useState } from 'preact/hooks';
import { get, put, type List } from '../api';
import { ListView, names, parseJsonField, useApiForm } from '../list';
import type { Organization } from '../main';
import { ErrorNote, Field, Page, formatDate, useLoad } from '../ui';
import { ModelAndToolsFields, modelName } from './agent-fields';
import { SpecialistsPanel } from './specialists';

interface Assistant {
  id: string;
  name: string;
  instructions: string;
  model: Record<string, unknown>;
  tools: string[];
  updatedAt: string;
}

const FIELDS = ['name', 'instructions', 'model', 'tools'] as const;
type FieldName = (typeof FIELDS)[number];

export function AssistantsPage({ org }: { org: Organization }) {
  const base = `/admin/v1/organizations/${encodeURIComponent(org.slug)}`;
  const list = useLoad(() => get<List<Assistant>>(`${base}/assistants`), [org.slug]);
  const [editing, setEditing] = useState<Assistant | 'new' | null>(null);
  const [team, setTeam] = useState<Assistant | null>(null);
  return (
    <Page
      title={`Assistants of ${org.name}`}
      actions={
        <button type="button" onClick={() => setEditing('new')}>
          New assistant
        </button>
      }
    >
      {editing !== null ? (
        <AssistantForm
          base={base}
          assistant={editing === 'new' ? null : editing}
          onDone={() => {
            setEditing(null);
            list.reload();
          }}
        />
      ) : null}
      {team !== null ? (
        <SpecialistsPanel key={team.id} base={base} assistant={team} onClose={() => setTeam(null)} />
      ) : null}
      <ListView
        list={list}
        empty="No assistants yet."
        caption="Assistants"
        rowKey={(assistant) => assistant.id}
        columns={[
          { label: 'Name', cell: (assistant) => assistant.name },
          { label: 'Id', cell: (assistant) => <code>{assistant.id}</code> },
          { label: 'Model', cell: (assistant) => modelName(assistant.model) },
          { label: 'Tools', cell: (assistant) => assistant.tools.join(', ') || '—' },
          { label: 'Updated', cell: (assistant) => formatDate(assistant.updatedAt) },
          {
            label: '',
            cell: (assistant) => (
              <>
                <button type="button" class="secondary" onClick={() => setEditing(assistant)}>
                  Edit<span class="sr-only"> {assistant.name}</span>
                </button>{' '}
                <button type="button" class="secondary" onClick={() => setTeam(assistant)}>
                  Specialists<span class="sr-only"> of {assistant.name}</span>
                </button>
              </>
            ),
          },
        ]}
      />
    </Page>
  );
}

function AssistantForm(props: { base: string; assistant: Assistant | null; onDone: () => void }) {
  const { assistant } = props;
  const [name, setName] = useState(assistant?.name ?? '');
  const [instructions, setInstructions] = useState(assistant?.instructions ?? '');
  const [model, setModel] = useState(JSON.stringify(assistant?.model ?? { provider: 'offline' }, null, 2));
  const [tools, setTools] = useState(assistant?.tools.join(', ') ?? '');
  const { errors, busy, submit, formError } = useApiForm(FIELDS);
  const save = submit(async () => {
    const body = { instructions, model: parseJsonField(model, 'model'), tools: names(tools) };
    await put(`${props.base}/assistants/${encodeURIComponent(name.trim())}`, body);
    props.onDone();
  });
  const describedBy = (field: FieldName) => (errors[field] ? `assistant-${field}-error` : undefined);
  return (
    <form class="panel" onSubmit={save} aria-label={assistant ? `Edit ${assistant.name}` : 'New assistant'}>
      <h2>{assistant ? `Edit ${assistant.name}` : 'New assistant'}</h2>
      <Field id="assistant-name" label="Name" error={errors.name}>
        <input
          id="assistant-name"
          required
          readOnly={assistant !== null}
          value={name}
          aria-describedby={describedBy('name')}
          onInput={(event) => setName(event.currentTarget.value)}
        />
      </Field>
      <Field id="assistant-instructions" label="Instructions" error={errors.instructions}>
        <textarea
          id="assistant-instructions"
          rows={4}
          value={instructions}
          aria-describedby={describedBy('instructions')}
          onInput={(event) => setInstructions(event.currentTarget.value)}
        />
      </Field>
      <ModelAndToolsFields
        prefix="assistant"
        labels={{ model: 'Model settings (JSON)', tools: 'Tools (comma-separated names)' }}
        model={model}
        tools={tools}
        errors={errors}
        onModel={setModel}
        onTools={setTools}
      />
      <ErrorNote error={formError} />
      <div class="row">
        <button type="submit" disabled={busy}>
          {assistant ? 'Save' : 'Create'}
        </button>
        <button type="button" class="secondary" onClick={props.onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}
