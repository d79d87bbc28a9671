import type { FakeUpstream } from '../fake-upstream/fake-upstream.ts';

/**
 * Resolves once `condition()` holds, looked at every `everyMs`: for a state the code under test
 * sends no event for (rows in a table, requests at the fake upstream). After `atMostMs` it resolves
 * anyway, so that a test whose state never comes fails on its own assertions instead of hanging.
 */
export async function whenTrue(condition: () => boolean | Promise<boolean>, { everyMs = 10, atMostMs = 60_000 } = {}): Promise<void> {
  const deadline = Date.now() + atMostMs;
  while (!(await condition()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, everyMs));
}

export interface BurstGate {
  /** Resolves once every request of the burst is decided: the fake upstream has it, or the gateway answered it. */
  decided: Promise<void>;
  /** Call with each answer the burst's requests get: before `decided`, only a refusal (or a failure) can come back. */
  answered(): void;
}

/**
 * For a burst of `count` requests whose answers must wait until the gateway has admitted or
 * refused every one of them (so that no answer frees its hold while another request is still being
 * decided): script the fake's replies with `until: gate.decided`. A fixed delay before the answers
 * was a guess at how long the burst takes to be decided, which a loaded machine outlasts. It
 * resets the fake first (its scripts and the requests it saw): script the burst's replies after it.
 *
 * An admitted request counts once it reaches the fake, so the admitted ones of a process must fit
 * in its connections to the provider (providers[].connections, 64 by default): past that they
 * wait for a connection, and the gate opens only after `atMostMs`. Wait on the holds instead there.
 */
export function burstGate(fake: FakeUpstream, count: number, atMostMs = 60_000): BurstGate {
  // A reply scripted for an earlier burst and never taken would answer at once.
  fake.reset();
  let answers = 0;
  return {
    decided: whenTrue(() => fake.requests.length + answers >= count, { atMostMs }),
    answered() {
      answers += 1;
    },
  };
}
