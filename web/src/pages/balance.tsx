import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Money } from '../components/money.tsx';
import { Empty, FieldError, FormError, invalidProps, Load, useAction, useApi } from '../components/states.tsx';
import { when } from '../money.ts';

interface Balance {
  balance: string;
  available: string;
  holds: { count: number; total: string };
  funds: Array<{ id: number; at: string; amount: string; note: string | null }>;
}

export function BalancePage() {
  const loaded = useApi<Balance>('/balance');
  const [amount, setAmount] = useState('');
  const [note, setNote] = useState('');
  const action = useAction();
  return (
    <section aria-labelledby="balance-title">
      <h1 id="balance-title">Balance</h1>
      <Load loaded={loaded} what="the balance">
        {(balance) => (
          <>
            <div class="cards">
              <div class="card">
                <h2>Balance</h2>
                <p class="big" data-testid="balance">
                  <Money amount={balance.balance} />
                </p>
              </div>
              <div class="card">
                <h2>Available</h2>
                <p class="big">
                  <Money amount={balance.available} />
                </p>
                <p>
                  <Money amount={balance.holds.total} /> held by {balance.holds.count} requests in flight
                </p>
              </div>
            </div>
            <form
              class="panel"
              onSubmit={(event) => {
                event.preventDefault();
                action.run(async () => {
                  await api('POST', '/balance/funds', { amount: amount.trim(), note: note.trim() || null });
                  setAmount('');
                  setNote('');
                  loaded.reload();
                });
              }}
            >
              <h2>Add funds</h2>
              <div class="row">
                <label>
                  Amount (USD)
                  <input
                    {...invalidProps('amount-error', action.fieldError('amount'))}
                    required
                    inputMode="decimal"
                    value={amount}
                    onInput={(event) => setAmount((event.target as HTMLInputElement).value)}
                    placeholder="25.00"
                  />
                  <FieldError id="amount-error" error={action.fieldError('amount')} />
                </label>
                <label>
                  Note
                  <input value={note} onInput={(event) => setNote((event.target as HTMLInputElement).value)} placeholder="invoice 7" />
                </label>
              </div>
              <FormError error={action.formError(['amount'])} />
              <button type="submit" disabled={action.busy}>
                {action.busy ? 'Adding…' : 'Add funds'}
              </button>
            </form>
            <h2>Funds history</h2>
            {balance.funds.length === 0 ? (
              <Empty>No funds added yet.</Empty>
            ) : (
              <div class="table-wrap">
                <table class="stack">
                  <caption>Funds added, newest first (charges are the receipts)</caption>
                  <thead>
                    <tr>
                      <th scope="col">When</th>
                      <th scope="col" class="num">
                        Amount
                      </th>
                      <th scope="col">Note</th>
                    </tr>
                  </thead>
                  <tbody>
                    {balance.funds.map((entry) => (
                      <tr key={entry.id}>
                        <td data-label="When">{when(entry.at)}</td>
                        <td data-label="Amount" class="num">
                          <Money amount={entry.amount} />
                        </td>
                        <td data-label="Note">{entry.note ?? ''}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </>
        )}
      </Load>
    </section>
  );
}
