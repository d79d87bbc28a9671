import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Empty, Load, useApi } from '../components/states.tsx';
import { when } from '../money.ts';
import { navigate } from '../router.ts';

interface Entry {
  id: number;
  at: string;
  actor: string;
  action: string;
  sentence: string;
  detail: Record<string, unknown>;
}

interface Page {
  data: Entry[];
  next_before: number | null;
}

const ACTIONS: Array<[string, string]> = [
  ['', 'any change'],
  ['key', 'keys (created, changed, revoked)'],
  ['key.created', 'key created'],
  ['key.revoked', 'key revoked'],
  ['key.limits', 'key limits'],
  ['key.updated', 'key changed'],
  ['budget.set', 'monthly budget'],
  ['alerts.set', 'alerts'],
  ['funds.added', 'funds added'],
  ['rules.set', 'rules'],
  ['member', 'members'],
  ['session', 'sign-ins'],
];

export function AuditPage({ path }: { path: string }) {
  const query = new URLSearchParams(path.split('?')[1] ?? '');
  const actor = query.get('actor') ?? '';
  const action = query.get('action') ?? '';
  const filter = new URLSearchParams({ limit: '50' });
  if (actor) filter.set('actor', actor);
  if (action) filter.set('action', action);
  const loaded = useApi<Page>(`/audit?${filter}`);
  const [more, setMore] = useState<{ key: string; rows: Entry[]; next: number | null } | null>(null);
  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">Audit log</h1>
      <form
        class="panel filters"
        aria-label="Filter the audit log"
        key={filter.toString()}
        onSubmit={(event) => {
          event.preventDefault();
          const form = new FormData(event.target as HTMLFormElement);
          const next = new URLSearchParams();
          for (const name of ['actor', 'action']) {
            const value = String(form.get(name) ?? '').trim();
            if (value) next.set(name, value);
          }
          navigate(`/console/audit${next.size ? `?${next}` : ''}`);
        }}
      >
        <label>
          Who
          <input name="actor" defaultValue={actor} placeholder="0x… address or cli" />
        </label>
        <label>
          What
          <select name="action" defaultValue={action}>
            {ACTIONS.map(([value, label]) => (
              <option key={value} value={value} selected={value === action}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Filter</button>
      </form>
      <Load loaded={loaded} what="the audit log">
        {(page) => {
          const extra = more?.key === filter.toString() ? more : null;
          const rows = [...page.data, ...(extra?.rows ?? [])];
          const cursor = extra ? extra.next : page.next_before;
          if (!rows.length) return <Empty>{actor || action ? 'No entries match.' : 'Nothing has been changed yet.'}</Empty>;
          return (
            <>
              <ol class="audit" aria-label="Every change, newest first">
                {rows.map((entry) => (
                  <li key={entry.id} data-action={entry.action}>
                    <time dateTime={entry.at}>{when(entry.at)}</time>
                    <p>{entry.sentence}</p>
                    <details>
                      <summary>
                        Details<span class="sr-only"> of entry {entry.id}</span>
                      </summary>
                      <dl class="facts">
                        <dt>Who</dt>
                        <dd>
                          <code>{entry.actor}</code>
                        </dd>
                        <dt>Action</dt>
                        <dd>
                          <code>{entry.action}</code>
                        </dd>
                        {Object.entries(entry.detail).map(([name, value]) => (
                          <>
                            <dt key={`${name}-name`}>{name.replaceAll('_', ' ')}</dt>
                            <dd key={`${name}-value`}>
                              <code>{typeof value === 'string' ? value : JSON.stringify(value)}</code>
                            </dd>
                          </>
                        ))}
                      </dl>
                    </details>
                  </li>
                ))}
              </ol>
              {cursor !== null && (
                <button
                  type="button"
                  onClick={async () => {
                    const next = new URLSearchParams(filter);
                    next.set('before', String(cursor));
                    const older = await api<Page>('GET', `/audit?${next}`);
                    setMore({ key: filter.toString(), rows: [...(extra?.rows ?? []), ...older.data], next: older.next_before });
                  }}
                >
                  Load older entries
                </button>
              )}
            </>
          );
        }}
      </Load>
    </section>
  );
}
