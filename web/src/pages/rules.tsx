import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { FormError, Load, useAction, useApi } from '../components/states.tsx';
import { usd } from '../money.ts';

interface ModelView {
  id: string;
  provider: string;
  prices_per_million_tokens: { input: string; cached_input: string; cache_write: string; output: string };
  context_window: number;
  max_output_tokens: number;
  capabilities: { tools: boolean; vision: boolean; reasoning: boolean };
}

interface AliasView {
  alias: string;
  candidates: string[];
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
                <span class="hint">
                  {model &&
                    `${usd(model.prices_per_million_tokens.input)} in / ${usd(model.prices_per_million_tokens.output)} out per 1M · ${capabilities(model)}`}
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
              <table>
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
                      <td>
                        <code>{model.id}</code>
                      </td>
                      <td class="num">{usd(model.prices_per_million_tokens.input)}</td>
                      <td class="num">{usd(model.prices_per_million_tokens.cached_input)}</td>
                      <td class="num">{usd(model.prices_per_million_tokens.output)}</td>
                      <td class="num">{model.context_window}</td>
                      <td>{capabilities(model)}</td>
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
