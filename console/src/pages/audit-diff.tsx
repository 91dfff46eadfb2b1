/** Before/after of one audit row, field by field: changed fields first and marked. */
export function AuditDiff({ before, after }: { before: unknown; after: unknown }) {
  const left = asRecord(before);
  const right = asRecord(after);
  const fields = [...new Set([...Object.keys(left), ...Object.keys(right)])];
  const changed = (field: string) => JSON.stringify(left[field]) !== JSON.stringify(right[field]);
  fields.sort((a, b) => Number(changed(b)) - Number(changed(a)) || a.localeCompare(b));
  return (
    <table class="diff">
      <caption class="sr-only">Changes</caption>
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col">Before</th>
          <th scope="col">After</th>
        </tr>
      </thead>
      <tbody>
        {fields.map((field) => (
          <tr key={field} class={changed(field) ? 'changed' : undefined}>
            <th scope="row">
              {field}
              {changed(field) ? <span class="sr-only"> (changed)</span> : null}
            </th>
            <td>
              <pre>{show(left[field])}</pre>
            </td>
            <td>
              <pre>{show(right[field])}</pre>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function asRecord(value: unknown): Record<string, unknown> {
  if (value === null || value === undefined) return {};
  return typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
}

function show(value: unknown): string {
  return value === undefined ? '—' : JSON.stringify(value, null, 2);
}
