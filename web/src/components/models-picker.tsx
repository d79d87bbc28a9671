import { useApi } from './states.tsx';

interface Choices {
  aliases: Array<{ alias: string }>;
  models: Array<{ id: string }>;
}

/**
 * Which models a key allows: every model, or the aliases and model ids ticked, from the same list
 * GET /v1/models gives a key (the console reads it through its own rules route). An allowed
 * alias does not allow its exact model ids.
 */
export function ModelsPicker({
  value,
  onChange,
  id,
  error,
}: {
  value: string[] | null;
  onChange: (next: string[] | null) => void;
  id: string;
  error?: string | null;
}) {
  const loaded = useApi<Choices>('/rules');
  const choices = loaded.data ? [...loaded.data.aliases.map((alias) => alias.alias), ...loaded.data.models.map((model) => model.id)] : [];
  const toggle = (model: string, on: boolean) => {
    const next = new Set(value ?? []);
    if (on) next.add(model);
    else next.delete(model);
    onChange(choices.filter((choice) => next.has(choice)));
  };
  return (
    <fieldset class="models-picker" aria-describedby={error ? `${id}-error` : undefined}>
      <legend>Allowed models</legend>
      <label class="inline">
        <input type="radio" name={`${id}-all`} checked={value === null} onChange={() => onChange(null)} /> every model
      </label>
      <label class="inline">
        <input type="radio" name={`${id}-all`} checked={value !== null} onChange={() => onChange(value ?? [])} /> only these:
      </label>
      {value !== null && (
        <div class="choices">
          {loaded.error && <p class="form-error">{loaded.error.message}</p>}
          {choices.map((model) => (
            <label class="inline" key={model}>
              <input
                type="checkbox"
                checked={value.includes(model)}
                onChange={(event) => toggle(model, (event.target as HTMLInputElement).checked)}
              />{' '}
              <code>{model}</code>
            </label>
          ))}
        </div>
      )}
      {error && (
        <span class="field-error" id={`${id}-error`} role="alert">
          {error}
        </span>
      )}
    </fieldset>
  );
}
