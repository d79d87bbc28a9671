import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';

export function Loading({ what }: { what: string }) {
  return (
    <p class="state loading" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function ErrorState({ error, retry }: { error: Error; retry?: () => void }) {
  return (
    <div class="state error" role="alert">
      <p>{error.message}</p>
      {retry && (
        <button type="button" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="state empty">{children}</p>;
}

export interface Loaded<T> {
  data: T | null;
  error: Error | null;
  loading: boolean;
  reload: () => void;
}

/** GET a console API path; reload after changes. */
export function useApi<T>(path: string): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; error: Error | null; loading: boolean }>({ data: null, error: null, loading: true });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setState((previous) => ({ ...previous, loading: true, error: null }));
    api<T>('GET', path).then(
      (data) => current && setState({ data, error: null, loading: false }),
      (error: Error) => current && setState({ data: null, error, loading: false }),
    );
    return () => {
      current = false;
    };
  }, [path, round]);
  const reload = useCallback(() => setRound((value) => value + 1), []);
  return { ...state, reload };
}

/** Renders loading, error or the data. */
export function Load<T>({ loaded, what, children }: { loaded: Loaded<T>; what: string; children: (data: T) => ComponentChildren }) {
  if (loaded.error) return <ErrorState error={loaded.error} retry={loaded.reload} />;
  if (!loaded.data) return <Loading what={what} />;
  return <>{children(loaded.data)}</>;
}

/** A form's busy and error state around one action. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (caught) {
      setError((caught as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, setError };
}

export function FormError({ error }: { error: string | null }) {
  return error ? (
    <p class="form-error" role="alert">
      {error}
    </p>
  ) : null;
}
