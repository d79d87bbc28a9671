import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ConfirmButton } from '../components/confirm-button.tsx';
import { Empty, FormError, Load, useAction, useApi } from '../components/states.tsx';
import { usd, when } from '../money.ts';

export interface KeyView {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  models: string[] | null;
  daily_limit: string | null;
  rate_limit_per_minute: number | null;
  expires_at: string | null;
  last_used_at: string | null;
  status: 'active' | 'revoked' | 'expired';
  spent_today?: string;
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

function CreateKeyForm({ onCreated }: { onCreated: (key: string) => void }) {
  const action = useAction();
  const [form, setForm] = useState({ name: '', inference: true, fix: false, models: '', daily: '', rate: '', expires: '' });
  const set = (field: keyof typeof form) => (event: Event) => {
    const target = event.target as HTMLInputElement;
    setForm({ ...form, [field]: target.type === 'checkbox' ? target.checked : target.value });
  };
  const submit = (event: Event) => {
    event.preventDefault();
    action.run(async () => {
      const scopes = [...(form.inference ? ['inference'] : []), ...(form.fix ? ['fix'] : [])];
      if (!scopes.length) throw new Error('Choose at least one scope.');
      const models = form.models
        .split(',')
        .map((model) => model.trim())
        .filter(Boolean);
      const created = await api<{ key: string }>('POST', '/keys', {
        name: form.name,
        scopes,
        models: models.length ? models : null,
        daily_limit: form.daily.trim() || null,
        rate_limit_per_minute: form.rate.trim() ? Number(form.rate) : null,
        expires_at: form.expires ? new Date(`${form.expires}T23:59:59Z`).toISOString() : null,
      });
      setForm({ name: '', inference: true, fix: false, models: '', daily: '', rate: '', expires: '' });
      onCreated(created.key);
    });
  };
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="create-key-title">
      <h2 id="create-key-title">Create a key</h2>
      <p class="hint">One key per tool or machine, so its spend can be seen and revoked alone.</p>
      <label>
        Name
        <input required value={form.name} onInput={set('name')} placeholder="laptop, ci, claude-code" />
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
      <label>
        Allowed models <span class="hint">aliases or model ids, comma-separated; empty allows every model</span>
        <input value={form.models} onInput={set('models')} placeholder="svc/fast, svc/balanced" />
      </label>
      <div class="row">
        <label>
          Daily limit (USD)
          <input inputMode="decimal" value={form.daily} onInput={set('daily')} placeholder="none" />
        </label>
        <label>
          Rate limit (requests/min)
          <input inputMode="numeric" value={form.rate} onInput={set('rate')} placeholder="default" />
        </label>
        <label>
          Expires
          <input type="date" value={form.expires} onInput={set('expires')} />
        </label>
      </div>
      <FormError error={action.error} />
      <button type="submit" disabled={action.busy}>
        {action.busy ? 'Creating…' : 'Create key'}
      </button>
    </form>
  );
}

function RevokeButton({ keyView, onRevoked }: { keyView: KeyView; onRevoked: () => void }) {
  if (keyView.status !== 'active') return null;
  return (
    <ConfirmButton
      label="Revoke"
      verb="revoke"
      subject={`${keyView.name} (${keyView.prefix})`}
      warning={`Revoke ${keyView.prefix}? Requests with it fail at once; this cannot be undone.`}
      action={async () => {
        await api('POST', `/keys/${keyView.id}/revoke`);
        onRevoked();
      }}
    />
  );
}

export function KeysPage() {
  const loaded = useApi<{ data: KeyView[] }>('/keys');
  const [newKey, setNewKey] = useState<string | null>(null);
  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">API keys</h1>
      {newKey ? (
        <NewKey value={newKey} onDone={() => setNewKey(null)} />
      ) : (
        <CreateKeyForm
          onCreated={(key) => {
            setNewKey(key);
            loaded.reload();
          }}
        />
      )}
      <Load loaded={loaded} what="keys">
        {({ data }) =>
          data.length === 0 ? (
            <Empty>No keys yet. Create one above.</Empty>
          ) : (
            <div class="table-wrap">
              <table>
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
                    <th scope="col">Last used</th>
                    <th scope="col">Status</th>
                    <th scope="col">
                      <span class="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {data.map((key) => (
                    <tr key={key.id} data-prefix={key.prefix}>
                      <td>{key.name}</td>
                      <td>
                        <code>{key.prefix}</code>
                      </td>
                      <td>{key.scopes.join(', ')}</td>
                      <td>{key.models ? key.models.join(', ') : 'all'}</td>
                      <td>
                        {key.daily_limit === null ? 'no daily limit' : `${usd(key.daily_limit)}/day`}
                        <br />
                        {key.rate_limit_per_minute === null ? 'default rate' : `${key.rate_limit_per_minute}/min`}
                      </td>
                      <td class="num">{usd(key.spent_today)}</td>
                      <td>{when(key.last_used_at)}</td>
                      <td>
                        <span class={`status ${key.status}`}>{key.status}</span>
                      </td>
                      <td>
                        <RevokeButton keyView={key} onRevoked={loaded.reload} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Load>
    </section>
  );
}
