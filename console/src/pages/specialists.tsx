import { useState } from 'preact/hooks';
import { get, put, type List } from '../api';
import { ListView, names, parseJsonField, useApiForm, useConfirmedDelete } from '../list';
import { ErrorNote, useLoad } from '../ui';
import { ModelAndToolsFields, TextField, modelName } from './agent-fields';

interface Specialist {
  id: string;
  name: string;
  role: string;
  instructions: string;
  model: Record<string, unknown> | null;
  tools: string[];
}

// model and tools first: their messages ("model.provider must be …") may mention a name.
const FIELDS = ['model', 'tools', 'name', 'role', 'instructions'] as const;

/** One assistant's specialists: list, create or update by name, edit, delete. */
export function SpecialistsPanel(props: {
  base: string;
  assistant: { id: string; name: string };
  onClose: () => void;
}) {
  const path = `${props.base}/assistants/${encodeURIComponent(props.assistant.id)}/specialists`;
  const list = useLoad(() => get<List<Specialist>>(path), [path]);
  const [editing, setEditing] = useState<Specialist | null>(null);
  const [name, setName] = useState('');
  const [role, setRole] = useState('');
  const [instructions, setInstructions] = useState('');
  const [model, setModel] = useState('');
  const [tools, setTools] = useState('');
  const { errors, submit, formError } = useApiForm(FIELDS);
  const { error, remove } = useConfirmedDelete();
  const fill = (specialist: Specialist | null) => {
    setEditing(specialist);
    setName(specialist?.name ?? '');
    setRole(specialist?.role ?? '');
    setInstructions(specialist?.instructions ?? '');
    setModel(specialist?.model ? JSON.stringify(specialist.model, null, 2) : '');
    setTools(specialist?.tools.join(', ') ?? '');
  };
  const save = submit(async () => {
    // Editing sends what the form shows (an empty model: the assistant's; no tools: none); a new
    // one leaves blank fields out, so saving under an existing name keeps what it had there.
    const body =
      editing !== null
        ? {
            role,
            instructions,
            model: model.trim() ? parseJsonField(model, 'model') : null,
            tools: names(tools),
          }
        : {
            role,
            instructions: instructions || undefined,
            model: model.trim() ? parseJsonField(model, 'model') : undefined,
            tools: tools.trim() ? names(tools) : undefined,
          };
    await put(`${path}/${encodeURIComponent(name.trim())}`, body);
    fill(null);
    list.reload();
  });
  return (
    <section class="panel" aria-labelledby="specialists-title">
      <h2 id="specialists-title">Specialists of {props.assistant.name}</h2>
      <ListView
        list={list}
        empty="No specialists."
        caption="Specialists"
        rowKey={(specialist) => specialist.id}
        columns={[
          { label: 'Name', cell: (specialist) => specialist.name },
          { label: 'Role', cell: (specialist) => specialist.role },
          {
            label: 'Model',
            cell: (specialist) => (specialist.model ? modelName(specialist.model) : "the assistant's"),
          },
          { label: 'Tools', cell: (specialist) => specialist.tools.join(', ') || '—' },
          {
            label: '',
            cell: (specialist) => (
              <>
                <button type="button" class="secondary" onClick={() => fill(specialist)}>
                  Edit<span class="sr-only"> specialist {specialist.name}</span>
                </button>{' '}
                <button
                  type="button"
                  class="danger"
                  onClick={() =>
                    void remove(
                      `the specialist "${specialist.name}"`,
                      `${path}/${encodeURIComponent(specialist.name)}`,
                      list.reload,
                    )
                  }
                >
                  Delete<span class="sr-only"> specialist {specialist.name}</span>
                </button>
              </>
            ),
          },
        ]}
      />
      <form
        onSubmit={save}
        aria-label={editing ? `Edit specialist ${editing.name}` : 'Add or update a specialist'}
      >
        <h3>{editing ? `Edit specialist ${editing.name}` : 'Add or update a specialist'}</h3>
        <div class="filters">
          <TextField
            id="specialist-name"
            label="Specialist name"
            required
            readOnly={editing !== null}
            value={name}
            error={errors.name}
            onInput={setName}
          />
          <TextField id="specialist-role" label="Role" value={role} error={errors.role} onInput={setRole} />
          <TextField
            id="specialist-instructions"
            label="Specialist instructions"
            value={instructions}
            error={errors.instructions}
            onInput={setInstructions}
          />
        </div>
        <ModelAndToolsFields
          prefix="specialist"
          labels={{
            model: "Specialist model settings (JSON; empty: the assistant's model)",
            tools: 'Specialist tools (comma-separated names)',
          }}
          model={model}
          tools={tools}
          errors={errors}
          onModel={setModel}
          onTools={setTools}
        />
        <div class="row">
          <button type="submit">Save specialist</button>
          {editing ? (
            <button type="button" class="secondary" onClick={() => fill(null)}>
              Cancel edit
            </button>
          ) : null}
          <button type="button" class="secondary" onClick={props.onClose}>
            Close
          </button>
        </div>
      </form>
      <ErrorNote error={formError ?? error} />
    </section>
  );
}
