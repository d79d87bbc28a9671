import { useState } from 'preact/hooks';
import { Money } from '../components/money.tsx';
import { Empty, Load, useApi } from '../components/states.tsx';
import { count, tokensInOut, TotalsTable } from '../components/totals-table.tsx';
import { RangeOptions, UsageChart } from '../components/usage-chart.tsx';
import { nanoOf, usdAxis } from '../money.ts';
import { onLinkClick } from '../router.ts';

interface Bucket {
  start: string;
  cost: string;
  requests: number;
  errors: number;
}

interface UsageRow {
  name: string;
  key_id?: string;
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

function UsageTable({ rows, caption, name, link }: { rows: UsageRow[]; caption: string; name: string; link: (row: UsageRow) => string }) {
  if (!rows.length) return <Empty>No requests in this range.</Empty>;
  return (
    <TotalsTable
      caption={caption}
      columns={[
        {
          heading: name,
          cell: (row) => (
            <a href={link(row)} onClick={onLinkClick} title={`Usage over time of ${row.name}`}>
              <code>{row.name}</code>
            </a>
          ),
        },
        { heading: 'Requests', cell: (row) => count(row.requests) },
        { heading: 'Errors', cell: (row) => count(row.errors) },
        { heading: 'Tokens in / out', cell: (row) => tokensInOut(row.input_tokens, row.output_tokens) },
        { heading: 'Cost', cell: (row) => <Money amount={row.cost} /> },
      ]}
      rows={rows}
      rowKey={(row) => row.name}
    />
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
                  <Money amount={overview.balance} />
                </p>
                <p>
                  Available <Money amount={overview.available} />
                </p>
              </div>
              <div class="card">
                <h2>Holds</h2>
                <p class="big">
                  <Money amount={overview.holds.total} />
                </p>
                <p>{overview.holds.count} requests in flight</p>
              </div>
              <div class="card">
                <h2>This month ({overview.month.period}, UTC)</h2>
                <p class="big">
                  <Money amount={overview.month.spend} />
                </p>
                <p>
                  {overview.month.budget === null ? (
                    'No monthly budget'
                  ) : (
                    <>
                      of <Money amount={overview.month.budget} /> budget, <Money amount={overview.month.remaining} /> left
                    </>
                  )}
                </p>
              </div>
            </div>
            <div class="toolbar">
              <h2>Spend over time</h2>
              <label>
                Range{' '}
                <select value={range} onChange={(event) => setRange((event.target as HTMLSelectElement).value)}>
                  <RangeOptions />
                </select>
              </label>
            </div>
            {overview.series.length ? (
              <UsageChart
                points={overview.series.map((bucket) => ({ start: bucket.start, group: 'account', value: nanoOf(bucket.cost) }))}
                groups={[{ id: 'account', label: 'Spend' }]}
                from={overview.range.from}
                to={overview.range.to}
                bucket={overview.range.bucket}
                format={usdAxis}
                label={`Spend per ${overview.range.bucket} (UTC)`}
              />
            ) : (
              <Empty>No spend in this range yet.</Empty>
            )}
            <p>
              <a href={`/console/usage?range=${range}`} onClick={onLinkClick}>
                Usage over time: spend, requests, errors and tokens per key and per model
              </a>
            </p>
            <UsageTable
              rows={overview.by_model}
              caption="Requests and errors per model"
              name="Model"
              link={(row) => `/console/usage?range=${range}&model=${encodeURIComponent(row.name)}`}
            />
            <UsageTable
              rows={overview.by_key}
              caption="Requests and errors per key"
              name="Key"
              link={(row) => `/console/usage?range=${range}&key=${encodeURIComponent(row.key_id ?? row.name)}&by=model`}
            />
          </>
        )}
      </Load>
    </section>
  );
}
