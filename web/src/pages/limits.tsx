import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ALERTS_CHANGED } from '../components/layout.tsx';
import { Money } from '../components/money.tsx';
import { Empty, FieldError, FormError, invalidProps, Load, useAction, useApi } from '../components/states.tsx';
import { defaultRateText, usd } from '../money.ts';
import { usdInputValue, type KeyView } from './keys.tsx';

interface Limits {
  monthly_budget: string | null;
  month: { period: string; spend: string; held: string };
  default_rate_limit_per_minute: number;
  keys: KeyView[];
}

interface Alerts {
  settings: { balance_below: string | null; budget_share: number | null };
  active: Array<{ kind: string }>;
}

const changed = () => dispatchEvent(new CustomEvent(ALERTS_CHANGED));

function BudgetForm({ limits, onSaved }: { limits: Limits; onSaved: () => void }) {
  const [value, setValue] = useState(usdInputValue(limits.monthly_budget));
  const action = useAction();
  const save = (budget: string | null) =>
    action.run(async () => {
      await api('PUT', '/limits/monthly-budget', { monthly_budget: budget });
      changed();
      onSaved();
    });
  const error = action.fieldError('monthly_budget');
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
        {limits.month.period} (UTC): spent <Money amount={limits.month.spend} />, held <Money amount={limits.month.held} />. Requests that would pass
        the budget (charges plus holds) are refused with <code>budget_exceeded</code>.
      </p>
      <label>
        Budget (USD per UTC month)
        <input
          inputMode="decimal"
          value={value}
          onInput={(event) => setValue((event.target as HTMLInputElement).value)}
          placeholder="no budget"
          {...invalidProps('budget-error', error)}
        />
        <FieldError id="budget-error" error={error} />
      </label>
      <FormError error={action.formError(['monthly_budget'])} />
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

function AlertsForm({ budget }: { budget: string | null }) {
  const loaded = useApi<Alerts>('/alerts');
  return (
    <Load loaded={loaded} what="alerts">
      {(alerts) => <AlertsFields key={JSON.stringify(alerts.settings)} alerts={alerts} budget={budget} onSaved={loaded.reload} />}
    </Load>
  );
}

function AlertsFields({ alerts, budget, onSaved }: { alerts: Alerts; budget: string | null; onSaved: () => void }) {
  const [below, setBelow] = useState(usdInputValue(alerts.settings.balance_below));
  const [share, setShare] = useState(alerts.settings.budget_share === null ? '' : String(alerts.settings.budget_share));
  const action = useAction();
  return (
    <form
      class="panel"
      aria-labelledby="alerts-title"
      onSubmit={(event) => {
        event.preventDefault();
        action.run(async () => {
          if (share.trim() && !/^\d+$/.test(share.trim())) throw new Error('The budget share is a whole percentage, such as 80.');
          await api('PUT', '/limits/alerts', { balance_below: below.trim() || null, budget_share: share.trim() ? Number(share) : null });
          changed();
          onSaved();
        });
      }}
    >
      <h2 id="alerts-title">Alerts</h2>
      <p>
        A banner on every page of the console, and the metric <code>gateway_account_alert</code>, while an alert holds. Leave a field empty to turn it
        off.
      </p>
      <div class="row">
        <label>
          When the available balance is below (USD)
          <input
            inputMode="decimal"
            value={below}
            onInput={(event) => setBelow((event.target as HTMLInputElement).value)}
            placeholder="off"
            {...invalidProps('alert-below-error', action.fieldError('balance_below'))}
          />
          <FieldError id="alert-below-error" error={action.fieldError('balance_below')} />
        </label>
        <label>
          When the month's spend passes (% of the budget)
          <input
            inputMode="numeric"
            value={share}
            onInput={(event) => setShare((event.target as HTMLInputElement).value)}
            placeholder="off"
            {...invalidProps('alert-share-error', action.fieldError('budget_share'))}
          />
          <FieldError id="alert-share-error" error={action.fieldError('budget_share')} />
        </label>
      </div>
      {budget === null && share.trim() !== '' && <p class="hint">There is no monthly budget yet: this alert waits for one.</p>}
      {budget !== null && share.trim() !== '' && /^\d+$/.test(share.trim()) && (
        <p class="hint">
          {share}% of {usd(budget)}.
        </p>
      )}
      <FormError error={action.formError(['balance_below', 'budget_share'])} />
      <button type="submit" disabled={action.busy}>
        Save alerts
      </button>
    </form>
  );
}

function KeyLimitsRow({ keyView, onSaved }: { keyView: KeyView; onSaved: () => void }) {
  const [daily, setDaily] = useState(usdInputValue(keyView.daily_limit));
  const [rate, setRate] = useState(keyView.rate_limit_per_minute === null ? '' : String(keyView.rate_limit_per_minute));
  const action = useAction();
  const dailyError = action.fieldError('daily_limit');
  const rateError = action.fieldError('rate_limit_per_minute');
  return (
    <tr data-prefix={keyView.prefix}>
      <td data-label="Key">
        {keyView.name} <code>{keyView.prefix}</code>
      </td>
      <td data-label="Daily limit (USD)">
        <label class="compact">
          <span class="sr-only">Daily limit of {keyView.prefix} (USD)</span>
          <input
            inputMode="decimal"
            value={daily}
            onInput={(event) => setDaily((event.target as HTMLInputElement).value)}
            placeholder="none"
            {...invalidProps(`daily-${keyView.id}`, dailyError)}
          />
        </label>
        <FieldError id={`daily-${keyView.id}`} error={dailyError} />
      </td>
      <td data-label="Requests per minute">
        <label class="compact">
          <span class="sr-only">Rate limit of {keyView.prefix} (requests per minute)</span>
          <input
            inputMode="numeric"
            value={rate}
            onInput={(event) => setRate((event.target as HTMLInputElement).value)}
            placeholder="default"
            {...invalidProps(`rate-${keyView.id}`, rateError)}
          />
        </label>
        <FieldError id={`rate-${keyView.id}`} error={rateError} />
      </td>
      <td data-label="Actions">
        <button
          type="button"
          disabled={action.busy}
          onClick={() =>
            action.run(async () => {
              if (rate.trim() && !/^\d+$/.test(rate.trim())) {
                throw new Error('The rate limit is a whole number of requests per minute; leave it empty for the default.');
              }
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
        <FormError error={action.formError(['daily_limit', 'rate_limit_per_minute'])} />
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
              <AlertsForm budget={limits.monthly_budget} />
              <h2>Per-key limits</h2>
              <p>Daily limits reset at midnight UTC. {defaultRateText(limits.default_rate_limit_per_minute)}</p>
              {active.length === 0 ? (
                <Empty>No active keys.</Empty>
              ) : (
                <div class="table-wrap">
                  <table class="stack">
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
