import { useState } from 'preact/hooks';
import { del } from '../api';
import type { Organization } from '../main';
import { ErrorNote, Field } from '../ui';
// The API's own answer type (a type only: nothing of the service reaches the bundle).
import type { ErasureReport } from '../../../src/users/erasure-report.js';

const LABELS: [keyof ErasureReport, string][] = [
  ['conversations', 'conversations'],
  ['responses', 'responses'],
  ['messages', 'messages'],
  ['claims', 'claims'],
  ['memoryItems', 'memory items'],
  ['memoryOptOuts', 'memory opt-outs'],
  ['files', 'user files'],
];

/**
 * Erasure of one end user's data in this organization (DELETE
 * /admin/v1/organizations/{org}/users/{userId}, the CLI's `users erase`). Irreversible, so it takes
 * two steps: "Erase…" opens a confirmation that only proceeds once the user id is typed again.
 */
export function UserErasure({
  org,
  userId,
  onErased,
}: {
  org: Organization;
  userId: string;
  onErased: () => void;
}) {
  const [confirming, setConfirming] = useState(false);
  const [typed, setTyped] = useState('');
  const [report, setReport] = useState<{ userId: string; deleted: ErasureReport } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const target = userId.trim();
  const erase = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      const path = `/admin/v1/organizations/${encodeURIComponent(org.slug)}/users/${encodeURIComponent(target)}`;
      setReport(await del<{ userId: string; deleted: ErasureReport }>(path));
      setConfirming(false);
      setTyped('');
      onErased();
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <section class="panel" aria-label="Erase a user's data">
      <h2>Erase a user&apos;s data</h2>
      <p class="muted">
        Deletes every conversation, response, message, claim, memory item and user file of the end user above
        in {org.name}, in one transaction. Usage totals stay (as anonymous usage); the audit log records the
        erasure.
      </p>
      {!confirming ? (
        <button
          type="button"
          class="danger"
          disabled={target === ''}
          onClick={() => {
            setReport(null);
            setConfirming(true);
          }}
        >
          Erase this user&apos;s data…
        </button>
      ) : (
        <form class="notice" onSubmit={erase} aria-label="Confirm erasure">
          <p role="alert">
            This permanently erases the data of <strong>{target}</strong> in {org.name}. It cannot be undone.
          </p>
          <Field id="erase-confirm" label={`Type the user id (${target}) to confirm`}>
            <input
              id="erase-confirm"
              value={typed}
              autoComplete="off"
              onInput={(e) => setTyped(e.currentTarget.value)}
            />
          </Field>
          <div class="row">
            <button type="submit" class="danger" disabled={typed !== target}>
              Erase permanently
            </button>
            <button type="button" class="secondary" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        </form>
      )}
      <ErrorNote error={error} />
      {report !== null ? (
        <p role="status" data-testid="erasure-report">
          Erased {report.userId}:{' '}
          {LABELS.map(([field, label]) => `${report.deleted[field]} ${label}`).join(', ')}.
        </p>
      ) : null}
    </section>
  );
}
