import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { FormError, Load, useAction, useApi } from '../components/states.tsx';
import { usdExact, when } from '../money.ts';

interface ModelView {
  id: string;
  provider: string;
  prices_per_million_tokens: { input: string; cached_input: string; cache_write: string; output: string };
  context_window: number;
  max_output_tokens: number;
  capabilities: { tools: boolean; vision: boolean; reasoning: boolean };
}

interface Health {
  state: 'up' | 'cooling' | 'probing';
  until: string | null;
  reason: string | null;
}

interface AliasView {
  alias: string;
  candidates: string[];
  health: Record<string, Health>;
  reasoning: 'low' | 'medium' | 'xhigh';
  source: 'console' | 'config';
}

interface Rules {
  aliases: AliasView[];
  models: ModelView[];
}

function capabilities(model: ModelView | undefined): string {
  if (!model) return '';
  const list = Object.entries(model.capabilities)
    .filter(([, on]) => on)
    .map(([name]) => name);
  return list.length ? list.join(', ') : 'text only';
}

/** Whether routing is skipping a candidate now, why and until when (UTC). */
function HealthNote({ health }: { health: Health | undefined }) {
  if (!health) return <span class="health">not saved yet</span>;
  if (health.state === 'up') return <span class="health up">in use</span>;
  if (health.state === 'cooling')
    return (
      <span class="health cooling">
        skipped: cooling down until {when(health.until)}
        {health.reason ? ` (${health.reason})` : ''}
      </span>
    );
  return <span class="health probing">being probed: one request tests it{health.until ? ` (cool-down ended ${when(health.until)})` : ''}</span>;
}

function AliasEditor({ alias, models, onSaved }: { alias: AliasView; models: ModelView[]; onSaved: () => void }) {
  const [candidates, setCandidates] = useState(alias.candidates);
  const [reasoning, setReasoning] = useState(alias.reasoning);
  const [adding, setAdding] = useState('');
  const action = useAction();
  const byId = new Map(models.map((model) => [model.id, model]));
  const move = (index: number, by: number) => {
    const next = [...candidates];
    const [moved] = next.splice(index, 1);
    next.splice(index + by, 0, moved!);
    setCandidates(next);
  };
  const changed = candidates.join() !== alias.candidates.join() || reasoning !== alias.reasoning;
  return (
    <form
      class="panel alias"
      aria-label={`Rule for ${alias.alias}`}
      onSubmit={(event) => {
        event.preventDefault();
        action.run(async () => {
          await api('PUT', '/rules', { alias: alias.alias, candidates, reasoning });
          onSaved();
        });
      }}
    >
      <h2>
        <code>{alias.alias}</code> <span class="hint">{alias.source === 'console' ? 'set in the console' : 'from the config file'}</span>
      </h2>
      <ol class="candidates">
        {candidates.map((id, index) => {
          const model = byId.get(id);
          return (
            <li key={id}>
              <span class="model">
                <code>{id}</code>
                <HealthNote health={alias.health[id]} />
                <span class="hint">
                  {model &&
                    `${usdExact(model.prices_per_million_tokens.input)} in / ${usdExact(model.prices_per_million_tokens.output)} out per 1M · ${capabilities(model)}`}
                </span>
              </span>
              <span class="actions">
                <button type="button" disabled={index === 0} onClick={() => move(index, -1)} aria-label={`Move ${id} up`}>
                  ↑
                </button>
                <button type="button" disabled={index === candidates.length - 1} onClick={() => move(index, 1)} aria-label={`Move ${id} down`}>
                  ↓
                </button>
                <button
                  type="button"
                  disabled={candidates.length === 1}
                  onClick={() => setCandidates(candidates.filter((other) => other !== id))}
                  aria-label={`Remove ${id}`}
                >
                  Remove
                </button>
              </span>
            </li>
          );
        })}
      </ol>
      <div class="row">
        <label>
          Add a model
          <select value={adding} onChange={(event) => setAdding((event.target as HTMLSelectElement).value)}>
            <option value="">Choose…</option>
            {models
              .filter((model) => !candidates.includes(model.id))
              .map((model) => (
                <option key={model.id} value={model.id}>
                  {model.id}
                </option>
              ))}
          </select>
        </label>
        <button
          type="button"
          disabled={!adding}
          onClick={() => {
            setCandidates([...candidates, adding]);
            setAdding('');
          }}
        >
          Add
        </button>
        <label>
          Default reasoning
          <select value={reasoning} onChange={(event) => setReasoning((event.target as HTMLSelectElement).value as AliasView['reasoning'])}>
            <option value="low">low</option>
            <option value="medium">medium</option>
            <option value="xhigh">xhigh</option>
          </select>
        </label>
      </div>
      <FormError error={action.error} />
      <button type="submit" disabled={!changed || action.busy}>
        Save {alias.alias}
      </button>
    </form>
  );
}

export function RulesPage() {
  const loaded = useApi<Rules>('/rules');
  return (
    <section aria-labelledby="rules-title">
      <h1 id="rules-title">Rules</h1>
      <p>
        Each alias tries its candidates in order and falls back to the next when one fails. Changes apply to every gateway process within a second.
      </p>
      <Load loaded={loaded} what="rules">
        {(rules) => (
          <>
            {rules.aliases.map((alias) => (
              <AliasEditor
                key={`${alias.alias}:${alias.candidates.join()}:${alias.reasoning}`}
                alias={alias}
                models={rules.models}
                onSaved={loaded.reload}
              />
            ))}
            <div class="table-wrap">
              <table class="stack">
                <caption>Models</caption>
                <thead>
                  <tr>
                    <th scope="col">Model</th>
                    <th scope="col" class="num">
                      Input / 1M
                    </th>
                    <th scope="col" class="num">
                      Cached / 1M
                    </th>
                    <th scope="col" class="num">
                      Output / 1M
                    </th>
                    <th scope="col" class="num">
                      Context
                    </th>
                    <th scope="col">Capabilities</th>
                  </tr>
                </thead>
                <tbody>
                  {rules.models.map((model) => (
                    <tr key={model.id}>
                      <td data-label="Model">
                        <code>{model.id}</code>
                      </td>
                      <td data-label="Input / 1M" class="num">
                        {usdExact(model.prices_per_million_tokens.input)}
                      </td>
                      <td data-label="Cached / 1M" class="num">
                        {usdExact(model.prices_per_million_tokens.cached_input)}
                      </td>
                      <td data-label="Output / 1M" class="num">
                        {usdExact(model.prices_per_million_tokens.output)}
                      </td>
                      <td data-label="Context" class="num">
                        {model.context_window.toLocaleString('en-US')}
                      </td>
                      <td data-label="Capabilities">{capabilities(model)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )}
      </Load>
    </section>
  );
}
