import { Field } from '../ui';

/**
 * Form pieces that assistants and specialists share: the admin API takes the same shapes for
 * both (a model settings object, a list of tool names), so one model field and one tools field.
 */
export function TextField(props: {
  id: string;
  label: string;
  hint?: string;
  value: string;
  error?: string;
  onInput: (value: string) => void;
  required?: boolean;
  readOnly?: boolean;
  /** A monospaced text area (JSON) instead of a one-line input. */
  json?: boolean;
}) {
  const { id, hint, error } = props;
  // The hint and the error under the field, for screen readers (ids as Field renders them).
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  const common = {
    id,
    value: props.value,
    'aria-describedby': described || undefined,
    onInput: (event: { currentTarget: { value: string } }) => props.onInput(event.currentTarget.value),
  };
  return (
    <Field id={id} label={props.label} hint={hint} error={error}>
      {props.json ? (
        <textarea rows={6} class="mono" {...common} />
      ) : (
        <input required={props.required} readOnly={props.readOnly} {...common} />
      )}
    </Field>
  );
}

const MODEL_HINT = 'As the CLI\'s --model-json, e.g. {"provider":"openai-compatible","baseUrl":…,"model":…}';

/** The model settings (JSON) and tools (comma-separated names) of an assistant or a specialist. */
export function ModelAndToolsFields(props: {
  /** `assistant` or `specialist`: the fields are `<prefix>-model` and `<prefix>-tools`. */
  prefix: string;
  labels: { model: string; tools: string };
  model: string;
  tools: string;
  errors: { model?: string; tools?: string };
  onModel: (value: string) => void;
  onTools: (value: string) => void;
}) {
  return (
    <>
      <TextField
        id={`${props.prefix}-model`}
        label={props.labels.model}
        hint={MODEL_HINT}
        json
        value={props.model}
        error={props.errors.model}
        onInput={props.onModel}
      />
      <TextField
        id={`${props.prefix}-tools`}
        label={props.labels.tools}
        value={props.tools}
        error={props.errors.tools}
        onInput={props.onTools}
      />
    </>
  );
}

/** The model an agent runs on, for a table: its upstream model name, else its provider. */
export function modelName(model: Record<string, unknown>): string {
  const name = model.model ?? model.provider;
  return typeof name === 'string' ? name : '—';
}
