import { useState } from 'preact/hooks';
import { Empty, Load, useApi } from '../components/states.tsx';
import { SpendChart, type Bucket } from '../components/spend-chart.tsx';
import { usd } from '../money.ts';

interface UsageRow {
  name: string;
  requests: number;
  errors: number;
  input_tokens: number;
  output_tokens: number;
  cost: string;
}

interface Overview {
  balance: string;
  available: string;
  holds: { count: number; total: string };
  month: { period: string; spend: string; held: string; budget: string | null; remaining: string | null };
  range: { from: string; to: string; bucket: 'hour' | 'day' };
  series: Bucket[];
  by_model: UsageRow[];
  by_key: UsageRow[];
}

function UsageTable({ rows, caption, name }: { rows: UsageRow[]; caption: string; name: string }) {
  if (!rows.length) return <Empty>No requests in this range.</Empty>;
  return (
    <div class="table-wrap">
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">{name}</th>
            <th scope="col" class="num">
              Requests
            </th>
            <th scope="col" class="num">
              Errors
            </th>
            <th scope="col" class="num">
              Tokens in / out
            </th>
            <th scope="col" class="num">
              Cost
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.name}>
              <td>
                <code>{row.name}</code>
              </td>
              <td class="num">{row.requests}</td>
              <td class="num">{row.errors}</td>
              <td class="num">
                {row.input_tokens} / {row.output_tokens}
              </td>
              <td class="num">{usd(row.cost)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function OverviewPage() {
  const [range, setRange] = useState('7d');
  const loaded = useApi<Overview>(`/overview?range=${range}`);
  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      <Load loaded={loaded} what="the overview">
        {(overview) => (
          <>
            <div class="cards">
              <div class="card">
                <h2>Balance</h2>
                <p class="big" data-testid="balance">
                  {usd(overview.balance)}
                </p>
                <p>Available {usd(overview.available)}</p>
              </div>
              <div class="card">
                <h2>Holds</h2>
                <p class="big">{usd(overview.holds.total)}</p>
                <p>{overview.holds.count} requests in flight</p>
              </div>
              <div class="card">
                <h2>This month ({overview.month.period})</h2>
                <p class="big">{usd(overview.month.spend)}</p>
                <p>
                  {overview.month.budget === null
                    ? 'No monthly budget'
                    : `of ${usd(overview.month.budget)} budget, ${usd(overview.month.remaining)} left`}
                </p>
              </div>
            </div>
            <div class="toolbar">
              <h2>Spend over time</h2>
              <label>
                Range{' '}
                <select value={range} onChange={(event) => setRange((event.target as HTMLSelectElement).value)}>
                  <option value="24h">Last 24 hours</option>
                  <option value="7d">Last 7 days</option>
                  <option value="30d">Last 30 days</option>
                  <option value="90d">Last 90 days</option>
                </select>
              </label>
            </div>
            {overview.series.length ? (
              <SpendChart series={overview.series} from={overview.range.from} to={overview.range.to} label={`Spend per ${overview.range.bucket}`} />
            ) : (
              <Empty>No spend in this range yet.</Empty>
            )}
            <UsageTable rows={overview.by_model} caption="Requests and errors per model" name="Model" />
            <UsageTable rows={overview.by_key} caption="Requests and errors per key" name="Key" />
          </>
        )}
      </Load>
    </section>
  );
}
