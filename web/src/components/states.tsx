import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../api.ts';

export function Loading({ what }: { what: string }) {
  return (
    <p class="state loading" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

/**
 * A page that could not load. "Try again" only where trying again can help (the gateway was
 * unreachable or failed); a refusal such as not_found says what is missing and offers a way back.
 */
export function ErrorState({ error, retry }: { error: Error; retry?: () => void }) {
  const retryable = !(error instanceof ApiError) || error.retryable;
  const unreachable = error instanceof ApiError && error.status === 0;
  return (
    <div class={`state error${unreachable ? ' unreachable' : ''}`} role="alert">
      <p>
        {unreachable && <strong>Gateway unreachable. </strong>}
        {error.message}
      </p>
      {retry && retryable ? (
        <button type="button" onClick={retry}>
          Try again
        </button>
      ) : error instanceof ApiError && error.status === 404 ? (
        <p>
          <a href="/console">Back to the overview</a>
        </p>
      ) : null}
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

/**
 * A form's busy and error state around one action. An error the gateway ties to a field
 * (`param`) is shown beside that field (fieldError) rather than at the foot of the form.
 */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<{ message: string; field: string | null } | null>(null);
  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setFailure(null);
    try {
      await action();
    } catch (caught) {
      const field = caught instanceof ApiError ? caught.param : null;
      setFailure({ message: caught instanceof ApiError ? caught.fieldMessage : (caught as Error).message, field });
    } finally {
      setBusy(false);
    }
  };
  return {
    busy,
    run,
    /** The error not tied to one of `fields` (those show beside their field). */
    error: failure ? failure.message : null,
    formError: (fields: string[]) => (failure && !(failure.field && fields.includes(failure.field)) ? failure.message : null),
    fieldError: (field: string) => (failure?.field === field ? failure.message : null),
    setError: (message: string | null) => setFailure(message === null ? null : { message, field: null }),
  };
}

export function FormError({ error }: { error: string | null }) {
  return error ? (
    <p class="form-error" role="alert">
      {error}
    </p>
  ) : null;
}

/** The error of one field, under it; the field names it with aria-describedby={id} and aria-invalid. */
export function FieldError({ id, error }: { id: string; error: string | null }) {
  return error ? (
    <span class="field-error" id={id} role="alert">
      {error}
    </span>
  ) : null;
}

/** Props that tie an input to its FieldError. */
export function invalidProps(id: string, error: string | null) {
  return error ? { 'aria-invalid': true as const, 'aria-describedby': id } : {};
}
