import { Empty, Load, useApi } from '../components/states.tsx';
import { Legend, RangeOptions, UsageChart } from '../components/usage-chart.tsx';
import { Money } from '../components/money.tsx';
import { count, tokensInOut, TotalsTable } from '../components/totals-table.tsx';
import { nanoBig, nanoOf, nanoString, usdAxis } from '../money.ts';
import { navigate } from '../router.ts';

interface SeriesRow {
  start: string;
  group: string;
  cost: string;
  requests: number;
  errors: number;
  failed_attempts: number;
  input_tokens: number;
  output_tokens: number;
}

interface Usage {
  range: { from: string; to: string; bucket: 'hour' | 'day' };
  by: 'account' | 'key' | 'model';
  key: { id: string; prefix: string; name: string } | null;
  model: string | null;
  groups: Array<{ id: string; label: string }>;
  series: SeriesRow[];
}

const METRICS = {
  spend: { label: 'Spend', value: (row: SeriesRow) => nanoOf(row.cost), format: usdAxis },
  requests: { label: 'Requests', value: (row: SeriesRow) => row.requests, format: (value: number) => Math.round(value).toLocaleString('en-US') },
  errors: {
    label: 'Errors and failed calls',
    value: (row: SeriesRow) => row.errors + row.failed_attempts,
    format: (value: number) => Math.round(value).toLocaleString('en-US'),
  },
  tokens: {
    label: 'Tokens',
    value: (row: SeriesRow) => row.input_tokens + row.output_tokens,
    format: (value: number) => Math.round(value).toLocaleString('en-US'),
  },
} as const;
type Metric = keyof typeof METRICS;

/** Usage over time: spend, requests, errors and tokens per UTC hour or day, for the account, per key or per model. */
export function UsagePage({ path }: { path: string }) {
  const query = new URLSearchParams(path.split('?')[1] ?? '');
  const range = query.get('range') ?? '7d';
  const bucket = query.get('bucket') ?? '';
  const by = query.get('by') ?? (query.get('model') ? 'model' : query.get('key') ? 'model' : 'account');
  const metric = (query.get('metric') ?? 'spend') as Metric;
  const request = new URLSearchParams({ range, by });
  if (bucket) request.set('bucket', bucket);
  for (const name of ['key', 'model']) if (query.get(name)) request.set(name, query.get(name)!);
  const loaded = useApi<Usage>(`/usage?${request}`);
  const set = (name: string, value: string) => {
    const next = new URLSearchParams(query);
    if (value) next.set(name, value);
    else next.delete(name);
    if (name === 'range') next.delete('bucket');
    navigate(`/console/usage?${next}`);
  };
  const select = (name: string) => (event: Event) => set(name, (event.target as HTMLSelectElement).value);

  return (
    <section aria-labelledby="usage-title">
      <h1 id="usage-title">Usage</h1>
      <div class="panel filters" role="group" aria-label="Period and grouping">
        <label>
          Period
          <select value={range} onChange={select('range')}>
            <RangeOptions />
          </select>
        </label>
        <label>
          Per
          <select value={bucket} onChange={select('bucket')}>
            <option value="">automatic</option>
            <option value="hour">hour (UTC)</option>
            <option value="day">day (UTC)</option>
          </select>
        </label>
        <label>
          Stacked by
          <select value={by} onChange={select('by')} disabled={query.get('model') !== null}>
            <option value="account">nothing (whole account)</option>
            <option value="key">key</option>
            <option value="model">model</option>
          </select>
        </label>
        <label>
          Show
          <select value={metric} onChange={select('metric')}>
            {Object.entries(METRICS).map(([name, { label }]) => (
              <option key={name} value={name}>
                {label}
              </option>
            ))}
          </select>
        </label>
      </div>
      <Load loaded={loaded} what="usage">
        {(usage) => {
          const chosen = METRICS[metric] ?? METRICS.spend;
          const scope = usage.model ? `model ${usage.model}` : usage.key ? `key ${usage.key.name} (${usage.key.prefix})` : 'the account';
          const totals = usage.groups.map((group) => {
            const rows = usage.series.filter((row) => row.group === group.id);
            const sum = (field: 'requests' | 'errors' | 'failed_attempts' | 'input_tokens' | 'output_tokens') =>
              rows.reduce((total, row) => total + row[field], 0);
            const cost = rows.reduce((total, row) => total + nanoBig(row.cost), 0n);
            return {
              group,
              cost: nanoString(cost),
              requests: sum('requests'),
              errors: sum('errors'),
              failed: sum('failed_attempts'),
              input: sum('input_tokens'),
              output: sum('output_tokens'),
            };
          });
          return (
            <>
              <p>
                {chosen.label} of {scope}, {usage.range.from.slice(0, 16).replace('T', ' ')} to {usage.range.to.slice(0, 16).replace('T', ' ')} UTC.
                {(usage.key || usage.model) && (
                  <>
                    {' '}
                    <a href="/console/usage" onClick={(event) => (event.preventDefault(), navigate('/console/usage'))}>
                      Whole account
                    </a>
                  </>
                )}
              </p>
              {usage.series.length === 0 ? (
                <Empty>No requests in this period.</Empty>
              ) : (
                <>
                  <UsageChart
                    points={usage.series.map((row) => ({ start: row.start, group: row.group, value: chosen.value(row) }))}
                    groups={usage.groups}
                    from={usage.range.from}
                    to={usage.range.to}
                    bucket={usage.range.bucket}
                    format={chosen.format}
                    label={`${chosen.label} per ${usage.range.bucket} (UTC), stacked by ${usage.by}`}
                  />
                  <Legend groups={usage.groups} />
                  <TotalsTable
                    caption="Totals of the period"
                    columns={[
                      {
                        heading: usage.by === 'account' ? 'Account' : usage.by === 'key' ? 'Key' : 'Model',
                        label: 'Name',
                        cell: (total) => <code>{total.group.label}</code>,
                      },
                      { heading: 'Spend', cell: (total) => <Money amount={total.cost} /> },
                      { heading: 'Requests', cell: (total) => count(total.requests) },
                      { heading: 'Errors', cell: (total) => count(total.errors) },
                      { heading: 'Failed calls', cell: (total) => count(total.failed) },
                      { heading: 'Tokens in / out', cell: (total) => tokensInOut(total.input, total.output) },
                    ]}
                    rows={totals}
                    rowKey={(total) => total.group.id}
                    group={(total) => total.group.id}
                  />
                  <p class="hint">
                    Failed calls: provider calls that failed, a fallback candidate's included, before another candidate answered or the request
                    failed. Total spend <Money amount={nanoString(totals.reduce((sum, total) => sum + nanoBig(total.cost), 0n))} />.
                  </p>
                </>
              )}
            </>
          );
        }}
      </Load>
    </section>
  );
}
