import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiFailure, del, fieldOf, type List } from './api';
import { Empty, ErrorNote, Loading } from './ui';

/**
 * What the console's list pages share: a table of API items with its loading, error and empty
 * states; a confirmed delete; and a form whose API error lands under the field it names.
 */
export interface Column<T> {
  /** The header; `''` renders a screen-reader-only "Actions". */
  label: string;
  cell: (item: T) => ComponentChildren;
  /** Right-aligned figures. */
  numeric?: boolean;
}

export function ItemTable<T>(props: {
  caption: string;
  /** A visible caption (a page with two tables); otherwise screen readers only. */
  showCaption?: boolean;
  testId?: string;
  columns: Column<T>[];
  items: T[];
  rowKey: (item: T) => string;
  rowAttributes?: (item: T) => Record<string, string>;
}) {
  return (
    <table data-testid={props.testId}>
      <caption class={props.showCaption ? undefined : 'sr-only'}>{props.caption}</caption>
      <thead>
        <tr>
          {props.columns.map((column, index) => (
            <th scope="col" key={index} class={column.numeric ? 'num' : undefined}>
              {column.label || <span class="sr-only">Actions</span>}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.items.map((item) => (
          <tr key={props.rowKey(item)} {...(props.rowAttributes?.(item) ?? {})}>
            {props.columns.map((column, index) => (
              <td key={index} class={column.numeric ? 'num' : undefined}>
                {column.cell(item)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A loaded list (useLoad of a `List<T>`): loading, its error, "empty", else the table. */
export function ListView<T>(
  props: {
    list: { data?: List<T>; error?: unknown; loading: boolean };
    empty: string;
  } & Omit<Parameters<typeof ItemTable<T>>[0], 'items'>,
) {
  const { list, empty, ...table } = props;
  const items = list.data?.data;
  return (
    <>
      <Loading when={list.loading && list.data === undefined} />
      <ErrorNote error={list.error} />
      <Empty when={items?.length === 0}>{empty}</Empty>
      {items?.length ? <ItemTable {...table} items={items} /> : null}
    </>
  );
}

/** Deletes after the browser's confirmation, then reloads; a refusal is kept in `error`. */
export function useConfirmedDelete() {
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
  return { error, remove };
}

/**
 * A form's submission: `submit(work)` is the onSubmit handler. An API refusal is shown under the
 * field its message names (`fields`), else under the form; `invalid` marks a field before sending.
 */
export function useApiForm<F extends string>(fields: readonly F[]) {
  const [errors, setErrors] = useState<Partial<Record<F | 'form', string>>>({});
  const [busy, setBusy] = useState(false);
  const submit = (work: () => Promise<void>) => async (event: Event) => {
    event.preventDefault();
    setErrors({});
    setBusy(true);
    try {
      await work();
    } catch (failure) {
      if (failure instanceof FieldInvalid) {
        setErrors({ [failure.field]: failure.message } as Partial<Record<F | 'form', string>>);
        return;
      }
      const message = failure instanceof Error ? failure.message : String(failure);
      const field = failure instanceof ApiFailure ? fieldOf(message, fields) : null;
      setErrors({ [field ?? 'form']: message } as Partial<Record<F | 'form', string>>);
    } finally {
      setBusy(false);
    }
  };
  const formError = errors.form ? new Error(errors.form) : null;
  return { errors, busy, submit, formError };
}

/** Thrown inside a submission for a field the console itself finds invalid (JSON that does not parse). */
export class FieldInvalid extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** `text` as JSON, or FieldInvalid for `field`. */
export function parseJsonField(text: string, field: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new FieldInvalid(field, `${field}: not valid JSON`);
  }
}

/** A comma-separated list of names, blanks dropped. */
export function names(text: string): string[] {
  return text
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
}
