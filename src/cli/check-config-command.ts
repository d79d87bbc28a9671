import { ConfigError, loadConfigDetails } from '../config/load-config.ts';
import { withoutUnsetProviders } from '../config/provider-variables.ts';
import { CliError } from './cli-error.ts';
import type { OfflineContext } from './command-context.ts';

/**
 * `gateway check-config`: loads and validates the config as `start` would, without opening the
 * database or calling a provider; prints what it resolved, or the errors (exit 2).
 */
export async function checkConfig(context: OfflineContext): Promise<void> {
  let loaded;
  try {
    loaded = loadConfigDetails(context.options.config);
    withoutUnsetProviders(structuredClone(loaded.config), loaded.unsetProviders);
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(error.message, 2, false);
    if (error instanceof Error) throw new CliError(`${loaded?.source ?? 'config'}: ${error.message}`, 2, false);
    throw error;
  }
  const { config, source, unsetProviders } = loaded;
  const skipped = new Map(unsetProviders.map((entry) => [entry.provider, entry.variables]));
  const aliases = config.aliases as Record<string, { candidates: string[]; reasoning?: string }>;
  const providerOf = new Map(config.models.map((model) => [model.id, model.provider]));
  const json = {
    source,
    valid: true,
    server: { host: config.server.host, port: config.server.port },
    providers: config.providers.map((provider) => ({
      id: provider.id,
      kind: provider.kind,
      skipped: skipped.has(provider.id),
      unset_variables: skipped.get(provider.id) ?? [],
    })),
    models: config.models.map((model) => ({ id: model.id, provider: model.provider, skipped: skipped.has(model.provider) })),
    aliases: Object.entries(aliases).map(([name, alias]) => ({
      name,
      candidates: alias.candidates.filter((candidate) => !skipped.has(providerOf.get(candidate) ?? '')),
      skipped_candidates: alias.candidates.filter((candidate) => skipped.has(providerOf.get(candidate) ?? '')),
    })),
  };
  if (context.options.json) return context.print(JSON.stringify(json, null, 2));
  const lines = [`${source}: valid`, `  listens on ${config.server.host}:${config.server.port}`, 'providers:'];
  for (const provider of json.providers) {
    lines.push(
      `  ${provider.id} (${provider.kind})${provider.skipped ? `: skipped at start, ${provider.unset_variables.join(' and ')} not set` : ''}`,
    );
  }
  lines.push('models:');
  for (const model of json.models) lines.push(`  ${model.id}${model.skipped ? ' (skipped)' : ''}`);
  lines.push('aliases:');
  for (const alias of json.aliases) {
    const dropped = alias.skipped_candidates.length ? ` (skipped: ${alias.skipped_candidates.join(', ')})` : '';
    lines.push(`  ${alias.name}: ${alias.candidates.join(', ')}${dropped}`);
  }
  context.print(lines.join('\n'));
}
