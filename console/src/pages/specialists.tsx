import { useState } from 'preact/hooks';
import { get, put, type List } from '../api';
import { ListView, useApiForm, useConfirmedDelete } from '../list';
import { ErrorNote, Field, useLoad } from '../ui';

interface Specialist {
  id: string;
  name: string;
  role: string;
  instructions: string;
  tools: string[];
}

const FIELDS = ['name', 'role', 'instructions'] as const;

/** One assistant's specialists: list, create or update by name, delete. */
export function SpecialistsPanel(props: {
  base: string;
  assistant: { id: string; name: string };
  onClose: () => void;
}) {
  const path = `${props.base}/assistants/${encodeURIComponent(props.assistant.id)}/specialists`;
  const list = useLoad(() => get<List<Specialist>>(path), [path]);
  const [name, setName] = useState('');
  const [role, setRole] = useState('');
  const [instructions, setInstructions] = useState('');
  const { errors, submit, formError } = useApiForm(FIELDS);
  const { error, remove } = useConfirmedDelete();
  const save = submit(async () => {
    await put(`${path}/${encodeURIComponent(name.trim())}`, {
      role,
      instructions: instructions || undefined,
    });
    setName('');
    setRole('');
    setInstructions('');
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
          { label: 'Tools', cell: (specialist) => specialist.tools.join(', ') || '—' },
          {
            label: '',
            cell: (specialist) => (
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
            ),
          },
        ]}
      />
      <form class="filters" onSubmit={save} aria-label="Add or update a specialist">
        <Field id="specialist-name" label="Specialist name" error={errors.name}>
          <input id="specialist-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Field id="specialist-role" label="Role" error={errors.role}>
          <input id="specialist-role" value={role} onInput={(e) => setRole(e.currentTarget.value)} />
        </Field>
        <Field id="specialist-instructions" label="Specialist instructions" error={errors.instructions}>
          <input
            id="specialist-instructions"
            value={instructions}
            onInput={(e) => setInstructions(e.currentTarget.value)}
          />
        </Field>
        <button type="submit">Save specialist</button>
        <button type="button" class="secondary" onClick={props.onClose}>
          Close
        </button>
      </form>
      <ErrorNote error={formError ?? error} />
    </section>
  );
}
