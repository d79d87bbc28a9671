import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Money } from '../components/money.tsx';
import { Empty, ErrorState, Load, Loading, useApi } from '../components/states.tsx';
import { usdExact, utcInput, utcInputValue, when } from '../money.ts';
import { navigate, onLinkClick } from '../router.ts';

interface Attempt {
  model: string;
  outcome: string;
  error_code: string | null;
  detail: string | null;
  latency_ms: number;
  step?: number;
  cost?: string;
}

interface Receipt {
  id: string;
  request_id: string;
  created_at: string;
  status: string;
  endpoint: string;
  stream: boolean;
  key: { id: string; prefix: string };
  requested_model: string | null;
  model: string | null;
  attempts: Attempt[];
  usage: { prompt_tokens: number; cached_tokens: number; cache_write_tokens: number; completion_tokens: number; reasoning_tokens: number } | null;
  usage_estimated: boolean;
  prices_per_million_tokens: { input: string; cached_input: string; cache_write: string; output: string } | null;
  hold: string;
  cost: string;
  latency_ms: number;
  time_to_first_token_ms: number | null;
  error_code: string | null;
}

interface Page {
  data: Receipt[];
  next_cursor: string | null;
}

const FILTERS = ['key', 'model', 'alias', 'status', 'error_code', 'endpoint', 'from', 'to'] as const;

interface Choices {
  keys: Array<{ id: string; name: string; prefix: string }>;
  aliases: string[];
}

/** The keys (by name and prefix) and aliases the filters offer. */
function useChoices(): Choices {
  const keys = useApi<{ data: Choices['keys'] }>('/keys');
  const rules = useApi<{ aliases: Array<{ alias: string }> }>('/rules');
  return { keys: keys.data?.data ?? [], aliases: rules.data?.aliases.map((alias) => alias.alias) ?? [] };
}

export function ReceiptsPage({ path }: { path: string }) {
  const query = new URLSearchParams(path.split('?')[1] ?? '');
  const [rows, setRows] = useState<Receipt[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const filters = Object.fromEntries(FILTERS.map((name) => [name, query.get(name) ?? '']));
  const search = new URLSearchParams(Object.entries(filters).filter(([, value]) => value)).toString();
  const choices = useChoices();

  const load = async (after: string | null) => {
    const parameters = new URLSearchParams(search);
    parameters.set('limit', '25');
    if (after) parameters.set('cursor', after);
    const page = await api<Page>('GET', `/receipts?${parameters}`);
    return page;
  };
  useEffect(() => {
    setRows(null);
    setError(null);
    load(null).then((page) => {
      setRows(page.data);
      setCursor(page.next_cursor);
    }, setError);
  }, [search]);

  const apply = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.target as HTMLFormElement);
    const next = new URLSearchParams();
    for (const name of FILTERS) {
      const value = String(form.get(name) ?? '').trim();
      if (!value) continue;
      next.set(name, name === 'from' || name === 'to' ? utcInput(value) : value);
    }
    navigate(`/console/receipts${next.size ? `?${next}` : ''}`);
  };

  return (
    <section aria-labelledby="receipts-title">
      <h1 id="receipts-title">Receipts</h1>
      <form class="panel filters" onSubmit={apply} aria-label="Filter receipts" key={search}>
        <label>
          Key
          <select name="key" defaultValue={filters.key}>
            <option value="">any</option>
            {filters.key && !choices.keys.some((key) => key.prefix === filters.key || key.id === filters.key) && (
              <option value={filters.key}>{filters.key}</option>
            )}
            {choices.keys.map((key) => (
              <option key={key.id} value={key.prefix} selected={filters.key === key.prefix || filters.key === key.id}>
                {key.name} ({key.prefix})
              </option>
            ))}
          </select>
        </label>
        <label>
          Model
          <input name="model" defaultValue={filters.model} placeholder="asked for or answering" />
        </label>
        <label>
          Alias asked for
          <select name="alias" defaultValue={filters.alias}>
            <option value="">any</option>
            {choices.aliases.map((alias) => (
              <option key={alias} value={alias} selected={filters.alias === alias}>
                {alias}
              </option>
            ))}
          </select>
        </label>
        <label>
          Status
          <select name="status" defaultValue={filters.status}>
            <option value="">any</option>
            <option value="succeeded">succeeded</option>
            <option value="failed">failed</option>
            <option value="cancelled">cancelled</option>
          </select>
        </label>
        <label>
          Error code
          <input name="error_code" defaultValue={filters.error_code} placeholder="provider_timeout" />
        </label>
        <label>
          Endpoint
          <select name="endpoint" defaultValue={filters.endpoint}>
            <option value="">any</option>
            <option value="chat.completions">chat.completions</option>
            <option value="messages">messages</option>
            <option value="responses">responses</option>
            <option value="fix.quote">fix.quote</option>
            <option value="fix.runs">fix.runs</option>
          </select>
        </label>
        <label>
          From (UTC)
          <input name="from" type="datetime-local" defaultValue={utcInputValue(filters.from)} />
        </label>
        <label>
          To (UTC)
          <input name="to" type="datetime-local" defaultValue={utcInputValue(filters.to)} />
        </label>
        <button type="submit">Filter</button>
      </form>
      <p class="exports">
        Export every receipt that matches:{' '}
        <a
          href={`/console/api/receipts/export?${new URLSearchParams({ ...Object.fromEntries(new URLSearchParams(search)), format: 'csv' })}`}
          download
        >
          CSV
        </a>{' '}
        ·{' '}
        <a
          href={`/console/api/receipts/export?${new URLSearchParams({ ...Object.fromEntries(new URLSearchParams(search)), format: 'json' })}`}
          download
        >
          JSON
        </a>
      </p>
      {error ? (
        <ErrorState error={error} />
      ) : rows === null ? (
        <Loading what="receipts" />
      ) : rows.length === 0 ? (
        <Empty>No receipts match.</Empty>
      ) : (
        <>
          <div class="table-wrap">
            <table class="stack">
              <caption>Receipts, newest first (times in UTC)</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Receipt</th>
                  <th scope="col">Model</th>
                  <th scope="col">Key</th>
                  <th scope="col">Status</th>
                  <th scope="col">Error</th>
                  <th scope="col" class="num">
                    Latency
                  </th>
                  <th scope="col" class="num">
                    Cost
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((receipt) => (
                  <tr key={receipt.id}>
                    <td data-label="When">{when(receipt.created_at)}</td>
                    <td data-label="Receipt">
                      <a href={`/console/receipts/${receipt.id}`} onClick={onLinkClick}>
                        {receipt.id}
                      </a>
                      <span class="hint"> {receipt.endpoint}</span>
                    </td>
                    <td data-label="Model">
                      {receipt.requested_model}
                      {receipt.model && receipt.model !== receipt.requested_model ? ` → ${receipt.model}` : ''}
                    </td>
                    <td data-label="Key">
                      <code>{receipt.key.prefix}</code>
                    </td>
                    <td data-label="Status">
                      <span class={`status ${receipt.status}`}>{receipt.status}</span>
                    </td>
                    <td data-label="Error">{receipt.error_code ? <code>{receipt.error_code}</code> : '—'}</td>
                    <td data-label="Latency" class="num">
                      {Math.round(receipt.latency_ms).toLocaleString('en-US')} ms
                    </td>
                    <td data-label="Cost" class="num">
                      <Money amount={receipt.cost} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {cursor && (
            <button
              type="button"
              disabled={loadingMore}
              onClick={async () => {
                setLoadingMore(true);
                try {
                  const page = await load(cursor);
                  setRows([...rows, ...page.data]);
                  setCursor(page.next_cursor);
                } catch (caught) {
                  setError(caught as Error);
                } finally {
                  setLoadingMore(false);
                }
              }}
            >
              {loadingMore ? 'Loading…' : 'Load more'}
            </button>
          )}
        </>
      )}
    </section>
  );
}

export function ReceiptDetailPage({ id }: { id: string }) {
  const loaded = useApi<Receipt>(`/receipts/${id}`);
  return (
    <section aria-labelledby="receipt-title">
      <p>
        <a href="/console/receipts" onClick={onLinkClick}>
          ← All receipts
        </a>
      </p>
      <h1 id="receipt-title">Receipt {id}</h1>
      <Load loaded={loaded} what="the receipt">
        {(receipt) => (
          <>
            <dl class="facts">
              <dt>Status</dt>
              <dd>
                <span class={`status ${receipt.status}`}>{receipt.status}</span>
                {receipt.error_code && <code> {receipt.error_code}</code>}
              </dd>
              <dt>When</dt>
              <dd>{when(receipt.created_at)}</dd>
              <dt>Endpoint</dt>
              <dd>
                {receipt.endpoint}
                {receipt.stream ? ' (streamed)' : ''}
              </dd>
              <dt>Model</dt>
              <dd>
                {receipt.requested_model ?? '—'} → {receipt.model ?? 'none answered'}
              </dd>
              <dt>Key</dt>
              <dd>
                <code>{receipt.key.prefix}</code> ({receipt.key.id})
              </dd>
              <dt>Cost</dt>
              <dd data-testid="receipt-cost">
                <Money amount={receipt.cost} exact /> <span class="hint">held {usdExact(receipt.hold)}</span>
              </dd>
              <dt>Latency</dt>
              <dd>
                {receipt.latency_ms} ms{receipt.time_to_first_token_ms !== null ? `, first token ${receipt.time_to_first_token_ms} ms` : ''}
              </dd>
              <dt>Request id</dt>
              <dd>
                <code>{receipt.request_id}</code>
              </dd>
            </dl>
            <h2>Usage</h2>
            {receipt.usage ? (
              <dl class="facts">
                <dt>Prompt tokens</dt>
                <dd>
                  {receipt.usage.prompt_tokens} ({receipt.usage.cached_tokens} cached, {receipt.usage.cache_write_tokens} written to cache)
                </dd>
                <dt>Completion tokens</dt>
                <dd>
                  {receipt.usage.completion_tokens} ({receipt.usage.reasoning_tokens} reasoning)
                </dd>
                {receipt.usage_estimated && (
                  <>
                    <dt>Note</dt>
                    <dd>estimated by the gateway: the provider never reported usage</dd>
                  </>
                )}
                {receipt.prices_per_million_tokens && (
                  <>
                    <dt>Prices per 1M</dt>
                    <dd>
                      input {usdExact(receipt.prices_per_million_tokens.input)}, cached {usdExact(receipt.prices_per_million_tokens.cached_input)},
                      output {usdExact(receipt.prices_per_million_tokens.output)}
                    </dd>
                  </>
                )}
              </dl>
            ) : (
              <Empty>No usage: no model answered.</Empty>
            )}
            <h2>Attempts</h2>
            {receipt.attempts.length === 0 ? (
              <Empty>No provider was called.</Empty>
            ) : (
              <div class="table-wrap">
                <table class="stack">
                  <caption>Attempts in order</caption>
                  <thead>
                    <tr>
                      {receipt.attempts.some((attempt) => attempt.step !== undefined) && <th scope="col">Step</th>}
                      <th scope="col">Model</th>
                      <th scope="col">Outcome</th>
                      <th scope="col">Detail</th>
                      <th scope="col" class="num">
                        Latency
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {receipt.attempts.map((attempt, index) => (
                      <tr key={index}>
                        {receipt.attempts.some((entry) => entry.step !== undefined) && <td data-label="Step">{attempt.step ?? ''}</td>}
                        <td data-label="Model">
                          <code>{attempt.model}</code>
                        </td>
                        <td data-label="Outcome">
                          {attempt.outcome}
                          {attempt.error_code ? ` (${attempt.error_code})` : ''}
                        </td>
                        <td data-label="Detail">{attempt.detail ?? ''}</td>
                        <td data-label="Latency" class="num">
                          {attempt.latency_ms} ms
                        </td>
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
