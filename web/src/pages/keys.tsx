import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ConfirmButton } from '../components/confirm-button.tsx';
import { Money } from '../components/money.tsx';
import { ModelsPicker } from '../components/models-picker.tsx';
import { Empty, FieldError, FormError, invalidProps, Load, useAction, useApi } from '../components/states.tsx';
import { nanoBig, when } from '../money.ts';
import { onLinkClick } from '../router.ts';

export interface KeyView {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  models: string[] | null;
  daily_limit: string | null;
  rate_limit_per_minute: number | null;
  expires_at: string | null;
  created_at: string;
  last_used_at: string | null;
  status: 'active' | 'revoked' | 'expired';
  spent_today?: string;
}

/** A USD string as an input's value: the digits the gateway gave, trailing zeros trimmed ("2.5"). */
export function usdInputValue(amount: string | null): string {
  if (amount === null) return '';
  const nano = nanoBig(amount);
  const fraction = (nano % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  return `${nano / 1_000_000_000n}${fraction ? `.${fraction}` : ''}`;
}

function NewKey({ value, onDone }: { value: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="new-key" role="region" aria-label="New key">
      <h2>Your new key</h2>
      <p>Copy it now: it is shown this once, and only a hash of it is kept.</p>
      <p class="secret">
        <code data-testid="new-key">{value}</code>
        <button
          type="button"
          onClick={async () => {
            await navigator.clipboard?.writeText(value).catch(() => undefined);
            setCopied(true);
          }}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
      </p>
      <p class="advice">
        Keep keys in tool settings or environment variables, never in browser code or repositories. To rotate: create a replacement with the same
        scopes and models, deploy it beside the old key, watch <em>Last used</em> on both, then revoke the old key. Revocation is immediate.
      </p>
      <button type="button" onClick={onDone}>
        Done
      </button>
    </div>
  );
}

const LIMIT_FIELDS = ['name', 'models', 'daily_limit', 'rate_limit_per_minute', 'expires_at'];

function CreateKeyForm({ onCreated, onCancel }: { onCreated: (key: string) => void; onCancel: () => void }) {
  const action = useAction();
  const [form, setForm] = useState({ name: '', inference: true, fix: false, daily: '', rate: '', expires: '' });
  const [models, setModels] = useState<string[] | null>(null);
  const set = (field: keyof typeof form) => (event: Event) => {
    const target = event.target as HTMLInputElement;
    setForm({ ...form, [field]: target.type === 'checkbox' ? target.checked : target.value });
  };
  const submit = (event: Event) => {
    event.preventDefault();
    action.run(async () => {
      const scopes = [...(form.inference ? ['inference'] : []), ...(form.fix ? ['fix'] : [])];
      if (!scopes.length) throw new Error('Choose at least one scope.');
      if (models !== null && !models.length) throw new Error('Tick at least one model, or allow every model.');
      const created = await api<{ key: string }>('POST', '/keys', {
        name: form.name,
        scopes,
        models,
        daily_limit: form.daily.trim() || null,
        rate_limit_per_minute: form.rate.trim() ? Number(form.rate) : null,
        expires_at: form.expires ? new Date(`${form.expires}T23:59:59Z`).toISOString() : null,
      });
      onCreated(created.key);
    });
  };
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="create-key-title">
      <h2 id="create-key-title">Create a key</h2>
      <p class="hint">One key per tool or machine, so its spend can be seen and revoked alone.</p>
      <label>
        Name
        <input
          required
          value={form.name}
          onInput={set('name')}
          placeholder="laptop, ci, claude-code"
          {...invalidProps('create-name-error', action.fieldError('name'))}
        />
        <FieldError id="create-name-error" error={action.fieldError('name')} />
      </label>
      <fieldset>
        <legend>Scopes</legend>
        <label class="inline">
          <input type="checkbox" checked={form.inference} onChange={set('inference')} /> inference (model requests)
        </label>
        <label class="inline">
          <input type="checkbox" checked={form.fix} onChange={set('fix')} /> fix (fix agents)
        </label>
      </fieldset>
      <ModelsPicker id="create-models" value={models} onChange={setModels} error={action.fieldError('models')} />
      <div class="row">
        <label>
          Daily limit (USD)
          <input
            inputMode="decimal"
            value={form.daily}
            onInput={set('daily')}
            placeholder="none"
            {...invalidProps('create-daily-error', action.fieldError('daily_limit'))}
          />
          <FieldError id="create-daily-error" error={action.fieldError('daily_limit')} />
        </label>
        <label>
          Rate limit (requests/min)
          <input
            inputMode="numeric"
            value={form.rate}
            onInput={set('rate')}
            placeholder="default"
            {...invalidProps('create-rate-error', action.fieldError('rate_limit_per_minute'))}
          />
          <FieldError id="create-rate-error" error={action.fieldError('rate_limit_per_minute')} />
        </label>
        <label>
          Expires (end of the day, UTC)
          <input
            type="date"
            value={form.expires}
            onInput={set('expires')}
            {...invalidProps('create-expires-error', action.fieldError('expires_at'))}
          />
          <FieldError id="create-expires-error" error={action.fieldError('expires_at')} />
        </label>
      </div>
      <FormError error={action.formError(LIMIT_FIELDS)} />
      <div class="row">
        <button type="submit" disabled={action.busy}>
          {action.busy ? 'Creating…' : 'Create key'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** Editing a key in place: its name, allowed models and limits. */
function EditKey({ keyView, onDone }: { keyView: KeyView; onDone: (saved: boolean) => void }) {
  const action = useAction();
  const [name, setName] = useState(keyView.name);
  const [models, setModels] = useState<string[] | null>(keyView.models);
  const [daily, setDaily] = useState(usdInputValue(keyView.daily_limit));
  const [rate, setRate] = useState(keyView.rate_limit_per_minute === null ? '' : String(keyView.rate_limit_per_minute));
  const id = `edit-${keyView.id}`;
  return (
    <form
      class="panel edit-key"
      aria-label={`Edit ${keyView.prefix}`}
      onSubmit={(event) => {
        event.preventDefault();
        action.run(async () => {
          if (models !== null && !models.length) throw new Error('Tick at least one model, or allow every model.');
          await api('PATCH', `/keys/${keyView.id}`, {
            name: name.trim(),
            models,
            daily_limit: daily.trim() || null,
            rate_limit_per_minute: rate.trim() ? Number(rate) : null,
          });
          onDone(true);
        });
      }}
    >
      <label>
        Name
        <input
          required
          value={name}
          onInput={(event) => setName((event.target as HTMLInputElement).value)}
          {...invalidProps(`${id}-name`, action.fieldError('name'))}
        />
        <FieldError id={`${id}-name`} error={action.fieldError('name')} />
      </label>
      <ModelsPicker id={`${id}-models`} value={models} onChange={setModels} error={action.fieldError('models')} />
      <div class="row">
        <label>
          Daily limit (USD)
          <input
            inputMode="decimal"
            value={daily}
            onInput={(event) => setDaily((event.target as HTMLInputElement).value)}
            placeholder="none"
            {...invalidProps(`${id}-daily`, action.fieldError('daily_limit'))}
          />
          <FieldError id={`${id}-daily`} error={action.fieldError('daily_limit')} />
        </label>
        <label>
          Rate limit (requests/min)
          <input
            inputMode="numeric"
            value={rate}
            onInput={(event) => setRate((event.target as HTMLInputElement).value)}
            placeholder="default"
            {...invalidProps(`${id}-rate`, action.fieldError('rate_limit_per_minute'))}
          />
          <FieldError id={`${id}-rate`} error={action.fieldError('rate_limit_per_minute')} />
        </label>
      </div>
      <FormError error={action.formError(LIMIT_FIELDS)} />
      <div class="row">
        <button type="submit" disabled={action.busy}>
          Save {keyView.prefix}
        </button>
        <button type="button" onClick={() => onDone(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function limitsText(key: KeyView): string {
  const daily = key.daily_limit === null ? 'no daily limit' : null;
  const rate = key.rate_limit_per_minute === null ? 'default rate' : `${key.rate_limit_per_minute}/min`;
  return daily ? `${daily}, ${rate}` : rate;
}

export function KeysPage() {
  const loaded = useApi<{ data: KeyView[] }>('/keys');
  const [newKey, setNewKey] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<string | null>(null);
  return (
    <section aria-labelledby="keys-title">
      <div class="toolbar">
        <h1 id="keys-title">API keys</h1>
        {!creating && !newKey && (
          <button type="button" class="primary" onClick={() => setCreating(true)}>
            Create a key
          </button>
        )}
      </div>
      {newKey ? (
        <NewKey value={newKey} onDone={() => setNewKey(null)} />
      ) : (
        creating && (
          <CreateKeyForm
            onCancel={() => setCreating(false)}
            onCreated={(key) => {
              setCreating(false);
              setNewKey(key);
              loaded.reload();
            }}
          />
        )
      )}
      <Load loaded={loaded} what="keys">
        {({ data }) =>
          data.length === 0 ? (
            <Empty>No keys yet. Create one with the button above.</Empty>
          ) : (
            <div class="table-wrap">
              <table class="stack">
                <caption>Keys</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Prefix</th>
                    <th scope="col">Scopes</th>
                    <th scope="col">Models</th>
                    <th scope="col">Limits</th>
                    <th scope="col" class="num">
                      Spent today
                    </th>
                    <th scope="col">Created</th>
                    <th scope="col">Expires</th>
                    <th scope="col">Last used</th>
                    <th scope="col">Status</th>
                    <th scope="col">
                      <span class="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {data.map((key) => [
                    <tr key={key.id} data-prefix={key.prefix}>
                      <td data-label="Name">{key.name}</td>
                      <td data-label="Prefix">
                        <code>{key.prefix}</code>
                      </td>
                      <td data-label="Scopes">{key.scopes.join(', ')}</td>
                      <td data-label="Models">{key.models ? key.models.join(', ') : 'all'}</td>
                      <td data-label="Limits">
                        <span>
                          {key.daily_limit !== null && (
                            <>
                              <Money amount={key.daily_limit} />
                              /day,{' '}
                            </>
                          )}
                          {limitsText(key)}
                        </span>
                      </td>
                      <td data-label="Spent today" class="num">
                        <Money amount={key.spent_today} />
                      </td>
                      <td data-label="Created">{when(key.created_at)}</td>
                      <td data-label="Expires">{key.expires_at ? when(key.expires_at) : 'never'}</td>
                      <td data-label="Last used">{when(key.last_used_at)}</td>
                      <td data-label="Status">
                        <span class={`status ${key.status}`}>{key.status}</span>
                      </td>
                      <td data-label="Actions" class="actions-cell">
                        <a href={`/console/usage?key=${encodeURIComponent(key.id)}&by=model`} onClick={onLinkClick}>
                          Usage<span class="sr-only"> of {key.prefix}</span>
                        </a>
                        <a href={`/console/receipts?key=${encodeURIComponent(key.prefix)}`} onClick={onLinkClick}>
                          Receipts<span class="sr-only"> of {key.prefix}</span>
                        </a>
                        {key.status === 'active' && (
                          <button type="button" onClick={() => setEditing(editing === key.id ? null : key.id)} aria-expanded={editing === key.id}>
                            Edit<span class="sr-only"> {key.prefix}</span>
                          </button>
                        )}
                        {key.status === 'active' && (
                          <ConfirmButton
                            label="Revoke"
                            verb="revoke"
                            subject={`${key.name} (${key.prefix})`}
                            warning={`Revoke ${key.prefix}? Requests with it fail at once; this cannot be undone.`}
                            action={async () => {
                              await api('POST', `/keys/${key.id}/revoke`);
                              loaded.reload();
                            }}
                          />
                        )}
                      </td>
                    </tr>,
                    editing === key.id && (
                      <tr key={`${key.id}-edit`} class="editor-row">
                        <td colSpan={11}>
                          <EditKey
                            keyView={key}
                            onDone={(saved) => {
                              setEditing(null);
                              if (saved) loaded.reload();
                            }}
                          />
                        </td>
                      </tr>
                    ),
                  ])}
                </tbody>
              </table>
            </div>
          )
        }
      </Load>
    </section>
  );
}
