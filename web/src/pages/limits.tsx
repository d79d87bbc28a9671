import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Empty, FormError, Load, useAction, useApi } from '../components/states.tsx';
import { usd } from '../money.ts';
import type { KeyView } from './keys.tsx';

interface Limits {
  monthly_budget: string | null;
  month: { period: string; spend: string; held: string };
  default_rate_limit_per_minute: number;
  keys: KeyView[];
}

function BudgetForm({ limits, onSaved }: { limits: Limits; onSaved: () => void }) {
  const [value, setValue] = useState(limits.monthly_budget === null ? '' : usd(limits.monthly_budget).slice(1));
  const action = useAction();
  const save = (budget: string | null) =>
    action.run(async () => {
      await api('PUT', '/limits/monthly-budget', { monthly_budget: budget });
      onSaved();
    });
  return (
    <form
      class="panel"
      onSubmit={(event) => {
        event.preventDefault();
        save(value.trim() || null);
      }}
    >
      <h2>Monthly budget</h2>
      <p>
        {limits.month.period}: spent {usd(limits.month.spend)}, held {usd(limits.month.held)}. Requests that would pass the budget (charges plus
        holds) are refused with <code>budget_exceeded</code>.
      </p>
      <label>
        Budget (USD per UTC month)
        <input inputMode="decimal" value={value} onInput={(event) => setValue((event.target as HTMLInputElement).value)} placeholder="no budget" />
      </label>
      <FormError error={action.error} />
      <div class="row">
        <button type="submit" disabled={action.busy}>
          Save budget
        </button>
        <button type="button" disabled={action.busy || limits.monthly_budget === null} onClick={() => save(null)}>
          Remove budget
        </button>
      </div>
    </form>
  );
}

function KeyLimitsRow({ keyView, onSaved }: { keyView: KeyView; onSaved: () => void }) {
  const [daily, setDaily] = useState(keyView.daily_limit === null ? '' : usd(keyView.daily_limit).slice(1));
  const [rate, setRate] = useState(keyView.rate_limit_per_minute === null ? '' : String(keyView.rate_limit_per_minute));
  const action = useAction();
  return (
    <tr data-prefix={keyView.prefix}>
      <td>
        {keyView.name} <code>{keyView.prefix}</code>
      </td>
      <td>
        <label class="compact">
          <span class="sr-only">Daily limit of {keyView.prefix} (USD)</span>
          <input inputMode="decimal" value={daily} onInput={(event) => setDaily((event.target as HTMLInputElement).value)} placeholder="none" />
        </label>
      </td>
      <td>
        <label class="compact">
          <span class="sr-only">Rate limit of {keyView.prefix} (requests per minute)</span>
          <input inputMode="numeric" value={rate} onInput={(event) => setRate((event.target as HTMLInputElement).value)} placeholder="default" />
        </label>
      </td>
      <td>
        <button
          type="button"
          disabled={action.busy}
          onClick={() =>
            action.run(async () => {
              await api('PATCH', `/keys/${keyView.id}`, {
                daily_limit: daily.trim() || null,
                rate_limit_per_minute: rate.trim() ? Number(rate) : null,
              });
              onSaved();
            })
          }
        >
          Save<span class="sr-only"> limits of {keyView.prefix}</span>
        </button>
        <FormError error={action.error} />
      </td>
    </tr>
  );
}

export function LimitsPage() {
  const loaded = useApi<Limits>('/limits');
  return (
    <section aria-labelledby="limits-title">
      <h1 id="limits-title">Limits</h1>
      <Load loaded={loaded} what="limits">
        {(limits) => {
          const active = limits.keys.filter((key) => key.status === 'active');
          return (
            <>
              <BudgetForm limits={limits} onSaved={loaded.reload} />
              <h2>Per-key limits</h2>
              <p>Daily limits reset at midnight UTC. Keys without a rate limit allow {limits.default_rate_limit_per_minute} requests per minute.</p>
              {active.length === 0 ? (
                <Empty>No active keys.</Empty>
              ) : (
                <div class="table-wrap">
                  <table>
                    <caption>Limits of active keys</caption>
                    <thead>
                      <tr>
                        <th scope="col">Key</th>
                        <th scope="col">Daily limit (USD)</th>
                        <th scope="col">Requests per minute</th>
                        <th scope="col">
                          <span class="sr-only">Actions</span>
                        </th>
                      </tr>
                    </thead>
                    <tbody>
                      {active.map((key) => (
                        <KeyLimitsRow key={`${key.id}:${key.daily_limit}:${key.rate_limit_per_minute}`} keyView={key} onSaved={loaded.reload} />
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
            </>
          );
        }}
      </Load>
    </section>
  );
}
