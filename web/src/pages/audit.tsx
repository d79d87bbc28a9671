import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Empty, Load, useApi } from '../components/states.tsx';
import { when } from '../money.ts';

interface Entry {
  id: number;
  at: string;
  actor: string;
  action: string;
  detail: Record<string, unknown>;
}

interface Page {
  data: Entry[];
  next_before: number | null;
}

export function AuditPage() {
  const loaded = useApi<Page>('/audit?limit=50');
  const [more, setMore] = useState<Entry[]>([]);
  const [next, setNext] = useState<number | null | undefined>(undefined);
  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">Audit log</h1>
      <Load loaded={loaded} what="the audit log">
        {(page) => {
          const rows = [...page.data, ...more];
          const cursor = next === undefined ? page.next_before : next;
          if (!rows.length) return <Empty>Nothing has been changed yet.</Empty>;
          return (
            <>
              <div class="table-wrap">
                <table>
                  <caption>Every change, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">When</th>
                      <th scope="col">Who</th>
                      <th scope="col">What</th>
                      <th scope="col">Detail</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((entry) => (
                      <tr key={entry.id}>
                        <td>{when(entry.at)}</td>
                        <td>
                          <code>{entry.actor}</code>
                        </td>
                        <td>{entry.action}</td>
                        <td>
                          <code class="detail">{JSON.stringify(entry.detail)}</code>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              {cursor !== null && (
                <button
                  type="button"
                  onClick={async () => {
                    const older = await api<Page>('GET', `/audit?limit=50&before=${cursor}`);
                    setMore([...more, ...older.data]);
                    setNext(older.next_before);
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
