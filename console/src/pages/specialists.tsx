import { useState } from 'preact/hooks';
import { ApiFailure, del, fieldOf, get, put, type List } from '../api';
import { Empty, ErrorNote, Field, Loading, useLoad } from '../ui';

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
  const [errors, setErrors] = useState<Partial<Record<(typeof FIELDS)[number] | 'form', string>>>({});
  const submit = async (event: Event) => {
    event.preventDefault();
    setErrors({});
    try {
      await put(`${path}/${encodeURIComponent(name.trim())}`, {
        role,
        instructions: instructions || undefined,
      });
      setName('');
      setRole('');
      setInstructions('');
      list.reload();
    } catch (failure) {
      const message = failure instanceof Error ? failure.message : String(failure);
      const field = failure instanceof ApiFailure ? fieldOf(message, FIELDS) : null;
      setErrors({ [field ?? 'form']: message });
    }
  };
  const remove = async (specialist: Specialist) => {
    if (!window.confirm(`Delete the specialist "${specialist.name}"?`)) return;
    try {
      await del(`${path}/${encodeURIComponent(specialist.name)}`);
      list.reload();
    } catch (failure) {
      setErrors({ form: failure instanceof Error ? failure.message : String(failure) });
    }
  };
  return (
    <section class="panel" aria-labelledby="specialists-title">
      <h2 id="specialists-title">Specialists of {props.assistant.name}</h2>
      <Loading when={list.loading && list.data === undefined} />
      <ErrorNote error={list.error} />
      <Empty when={list.data?.data.length === 0}>No specialists.</Empty>
      {list.data?.data.length ? (
        <table>
          <caption class="sr-only">Specialists</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">Tools</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.data.map((specialist) => (
              <tr key={specialist.id}>
                <td>{specialist.name}</td>
                <td>{specialist.role}</td>
                <td>{specialist.tools.join(', ') || '—'}</td>
                <td>
                  <button type="button" class="danger" onClick={() => void remove(specialist)}>
                    Delete<span class="sr-only"> specialist {specialist.name}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <form class="filters" onSubmit={submit} aria-label="Add or update a specialist">
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
      <ErrorNote error={errors.form ? new Error(errors.form) : null} />
    </section>
  );
}
