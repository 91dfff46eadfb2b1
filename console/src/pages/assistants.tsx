import { useState } from 'preact/hooks';
import { ApiFailure, fieldOf, get, put, type List } from '../api';
import type { Organization } from '../main';
import { Empty, ErrorNote, Field, Loading, Page, formatDate, useLoad } from '../ui';
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
      {team !== null ? <SpecialistsPanel base={base} assistant={team} onClose={() => setTeam(null)} /> : null}
      <Loading when={list.loading && list.data === undefined} />
      <ErrorNote error={list.error} />
      <Empty when={list.data?.data.length === 0}>No assistants yet.</Empty>
      {list.data?.data.length ? (
        <table>
          <caption class="sr-only">Assistants</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Id</th>
              <th scope="col">Model</th>
              <th scope="col">Tools</th>
              <th scope="col">Updated</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.data.map((assistant) => (
              <tr key={assistant.id}>
                <td>{assistant.name}</td>
                <td>
                  <code>{assistant.id}</code>
                </td>
                <td>{modelName(assistant.model)}</td>
                <td>{assistant.tools.join(', ') || '—'}</td>
                <td>{formatDate(assistant.updatedAt)}</td>
                <td>
                  <button type="button" class="secondary" onClick={() => setEditing(assistant)}>
                    Edit<span class="sr-only"> {assistant.name}</span>
                  </button>{' '}
                  <button type="button" class="secondary" onClick={() => setTeam(assistant)}>
                    Specialists<span class="sr-only"> of {assistant.name}</span>
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

function AssistantForm(props: { base: string; assistant: Assistant | null; onDone: () => void }) {
  const { assistant } = props;
  const [name, setName] = useState(assistant?.name ?? '');
  const [instructions, setInstructions] = useState(assistant?.instructions ?? '');
  const [model, setModel] = useState(JSON.stringify(assistant?.model ?? { provider: 'offline' }, null, 2));
  const [tools, setTools] = useState(assistant?.tools.join(', ') ?? '');
  const [errors, setErrors] = useState<Partial<Record<FieldName | 'form', string>>>({});
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    let parsedModel: unknown;
    try {
      parsedModel = JSON.parse(model);
    } catch {
      setErrors({ model: 'model: not valid JSON' });
      return;
    }
    setBusy(true);
    setErrors({});
    try {
      const body = {
        instructions,
        model: parsedModel,
        tools: tools
          .split(',')
          .map((tool) => tool.trim())
          .filter(Boolean),
      };
      await put(`${props.base}/assistants/${encodeURIComponent(name.trim())}`, body);
      props.onDone();
    } catch (failure) {
      const message = failure instanceof Error ? failure.message : String(failure);
      const field = failure instanceof ApiFailure ? fieldOf(message, FIELDS) : null;
      setErrors({ [field ?? 'form']: message });
    } finally {
      setBusy(false);
    }
  };
  const describedBy = (field: FieldName) => (errors[field] ? `assistant-${field}-error` : undefined);
  return (
    <form class="panel" onSubmit={submit} aria-label={assistant ? `Edit ${assistant.name}` : 'New assistant'}>
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
      <Field
        id="assistant-model"
        label="Model settings (JSON)"
        hint='As the CLI&apos;s --model-json, e.g. {"provider":"openai-compatible","baseUrl":…,"model":…}'
        error={errors.model}
      >
        <textarea
          id="assistant-model"
          rows={6}
          class="mono"
          value={model}
          aria-describedby={describedBy('model')}
          onInput={(event) => setModel(event.currentTarget.value)}
        />
      </Field>
      <Field id="assistant-tools" label="Tools (comma-separated names)" error={errors.tools}>
        <input
          id="assistant-tools"
          value={tools}
          aria-describedby={describedBy('tools')}
          onInput={(event) => setTools(event.currentTarget.value)}
        />
      </Field>
      <ErrorNote error={errors.form ? new Error(errors.form) : null} />
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

function modelName(model: Record<string, unknown>): string {
  const name = model.model ?? model.provider;
  return typeof name === 'string' ? name : '—';
}
