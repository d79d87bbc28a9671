/** A step that did not finish within its deadline. */
export class DeadlinePassed extends Error {
  constructor(
    readonly step: string,
    readonly ms: number,
  ) {
    super(`${step} did not finish within ${ms} ms`);
    this.name = 'DeadlinePassed';
  }
}

/**
 * `work`, or DeadlinePassed once `ms` have passed first. The work itself goes on (a promise cannot
 * be cancelled): the caller decides what to force. The timer never keeps the process alive.
 */
export async function withDeadline<T>(work: Promise<T>, ms: number, step: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const passed = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new DeadlinePassed(step, ms)), ms);
    timer.unref();
  });
  try {
    return await Promise.race([work, passed]);
  } finally {
    clearTimeout(timer);
  }
}

/** True when `work` settled within `ms`, false when the time ran out first (its outcome is not awaited further). */
export async function settledWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  try {
    await withDeadline(
      work.catch(() => undefined),
      ms,
      'wait',
    );
    return true;
  } catch {
    return false;
  }
}
