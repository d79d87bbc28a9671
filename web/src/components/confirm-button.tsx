import { useState } from 'preact/hooks';
import { FormError, useAction } from './states.tsx';

/**
 * A destructive action asked twice: the button, then a sentence saying what happens with
 * "Yes, <verb>" and "Cancel" beside it.
 */
export function ConfirmButton(props: { label: string; verb: string; subject: string; warning: string; action: () => Promise<void> }) {
  const [confirming, setConfirming] = useState(false);
  const action = useAction();
  if (!confirming)
    return (
      <button type="button" class="danger" onClick={() => setConfirming(true)} aria-label={`${props.label} ${props.subject}`}>
        {props.label}
      </button>
    );
  return (
    <span class="confirm" role="group" aria-label={`Confirm: ${props.label.toLowerCase()} ${props.subject}`}>
      <span>{props.warning}</span>
      <button type="button" class="danger" disabled={action.busy} onClick={() => action.run(props.action)}>
        Yes, {props.verb}
      </button>
      <button type="button" onClick={() => setConfirming(false)}>
        Cancel
      </button>
      <FormError error={action.error} />
    </span>
  );
}
