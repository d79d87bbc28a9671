/** A cheap check that a dependency answers, for /ready. */
export interface ReadinessProbe {
  name: string;
  check(): Promise<void>;
}

export type ProbeOutcome = 'ok' | 'failed' | 'timeout';

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, ProbeOutcome>;
}

/**
 * Runs the probes for /ready, each within `timeoutMs`. A probe still running from an earlier
 * call is not started again (a database that stopped answering would otherwise collect one
 * stuck query per load-balancer check until its pool is full): it counts as a timeout. Why a
 * probe failed goes to `onFailure` (the log), never to the unauthenticated caller.
 */
export class Readiness {
  private readonly running = new Map<string, Promise<ProbeOutcome>>();
  /** Set when the process begins to stop: /ready says so, whatever the probes would answer. */
  stopping = false;

  constructor(
    private readonly probes: ReadinessProbe[],
    private readonly onFailure: (probe: string, error: unknown) => void,
    private readonly timeoutMs = 1_000,
  ) {}

  async report(): Promise<ReadinessReport> {
    const outcomes = await Promise.all(this.probes.map((probe) => this.run(probe)));
    const checks = Object.fromEntries(this.probes.map((probe, index) => [probe.name, outcomes[index]!]));
    return { ready: outcomes.every((outcome) => outcome === 'ok'), checks };
  }

  private run(probe: ReadinessProbe): Promise<ProbeOutcome> {
    if (this.running.has(probe.name)) return Promise.resolve('timeout');
    const outcome = probe.check().then(
      (): ProbeOutcome => 'ok',
      (error): ProbeOutcome => {
        this.onFailure(probe.name, error);
        return 'failed';
      },
    );
    this.running.set(probe.name, outcome);
    void outcome.finally(() => this.running.delete(probe.name));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<ProbeOutcome>((resolve) => {
      timer = setTimeout(() => {
        this.onFailure(probe.name, new Error(`no answer within ${this.timeoutMs} ms`));
        resolve('timeout');
      }, this.timeoutMs);
    });
    return Promise.race([outcome, timeout]).finally(() => clearTimeout(timer));
  }
}
