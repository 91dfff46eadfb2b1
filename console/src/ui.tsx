import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiFailure } from './api';

/** Loads with `load` whenever `deps` change; `reload` runs it again (after a write). */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data?: T; error?: ApiFailure | Error; loading: boolean }>({
    loading: true,
  });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error: Error) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((value) => value + 1) };
}

export function Page(props: { title: string; actions?: ComponentChildren; children: ComponentChildren }) {
  return (
    <section aria-labelledby="page-title">
      <header class="page-head">
        <h1 id="page-title">{props.title}</h1>
        {props.actions}
      </header>
      {props.children}
    </section>
  );
}

export function ErrorNote({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  const text =
    error instanceof ApiFailure
      ? error.status === 404
        ? 'Not found (or not visible to this credential).'
        : `${error.message} (${error.code})`
      : error instanceof Error
        ? error.message
        : 'Something went wrong.';
  return (
    <p class="error" role="alert">
      {text}
    </p>
  );
}

export function Loading({ when }: { when: boolean }) {
  return when ? (
    <p class="muted" role="status">
      Loading…
    </p>
  ) : null;
}

export function Field(props: {
  id: string;
  label: string;
  error?: string | null;
  hint?: string;
  children: ComponentChildren;
}) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.hint ? (
        <small class="muted" id={`${props.id}-hint`}>
          {props.hint}
        </small>
      ) : null}
      {props.error ? (
        <small class="field-error" id={`${props.id}-error`} role="alert">
          {props.error}
        </small>
      ) : null}
    </div>
  );
}

export function Empty({ when, children }: { when: boolean; children: ComponentChildren }) {
  return when ? <p class="muted">{children}</p> : null;
}

export function formatDate(value: string | null | undefined): string {
  if (!value) return '—';
  return new Date(value).toISOString().replace('T', ' ').slice(0, 19) + ' UTC';
}

export function formatNumber(value: number): string {
  return value.toLocaleString('en-US');
}
