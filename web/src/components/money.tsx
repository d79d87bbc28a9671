import { usd, usdExact } from '../money.ts';

/** An amount in summary form; hovering (or a screen reader's description) gives every digit. */
export function Money({ amount, exact = false }: { amount: string | null | undefined; exact?: boolean }) {
  if (amount === null || amount === undefined) return <span>—</span>;
  const full = usdExact(amount);
  if (exact) return <span class="money">{full}</span>;
  return (
    <span class="money" title={full} data-exact={full}>
      {usd(amount)}
    </span>
  );
}
