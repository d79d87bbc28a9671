import type { ProviderConfig } from '../config/schema.ts';

/** How long a probe's answer holds, up or down. */
const PROBE_TTL_MS = 10_000;
/** A server on this host answers at once; one that takes longer is as good as down for a quote. */
const PROBE_TIMEOUT_MS = 1_500;

const probes = new Map<string, { until: number; answer: Promise<boolean> }>();

/** The cheapest request a provider of this kind answers: its model list. */
function probeUrl(provider: ProviderConfig): string {
  return provider.kind === 'anthropic' ? `${provider.baseUrl}/v1/models` : `${provider.baseUrl}/models`;
}

async function probe(provider: ProviderConfig): Promise<boolean> {
  try {
    const response = await fetch(probeUrl(provider), { headers: provider.headers, signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    await response.body?.cancel();
    // Any answer but a refused credential (it needs a key the config does not give) or a server error: it serves.
    return response.status !== 401 && response.status !== 403 && response.status < 500;
  } catch {
    return false;
  }
}

/**
 * Whether a key-less provider on this host (Ollama, llama.cpp, vLLM) is running: one GET of its
 * model list, shared by every caller and believed for 10 s.
 */
export function localProviderAnswers(provider: ProviderConfig, now = Date.now()): Promise<boolean> {
  const url = probeUrl(provider);
  const known = probes.get(url);
  if (known && known.until > now) return known.answer;
  const answer = probe(provider);
  probes.set(url, { until: now + PROBE_TTL_MS, answer });
  return answer;
}
