import type { LoadRecorder } from "../recorder.js";

/**
 * Where a long run is (capacity, a soak of minutes): elapsed, the rate planned against the rate
 * sent over the last stretch, the errors so far. On a terminal the run's progress bar shows the
 * line; elsewhere (CI logs) it is printed plainly every so often.
 */
export class RunProgress {
  private current: LoadRecorder | undefined;
  private last = { at: 0, answers: 0 };
  private timer: NodeJS.Timeout | undefined;

  /** The scenario that runs now. */
  watch(recorder: LoadRecorder): void {
    this.current = recorder;
    this.last = { at: recorder.startedAt, answers: 0 };
  }

  /** `capacity: 34 s, 41.9 req/s sent of 42.0 planned, 0 errors so far`; undefined for a scenario with no planned rate. */
  line(now = Date.now()): string | undefined {
    const r = this.current;
    if (r?.plannedPerSecond === undefined) return undefined;
    const answers = r.conformance.responses;
    const seconds = (now - this.last.at) / 1000;
    const rate = seconds > 0 ? (answers - this.last.answers) / seconds : 0;
    this.last = { at: now, answers };
    let errors = [...r.transportErrors.values()].reduce((n, c) => n + c, 0);
    for (const row of r.statusPerSecond.values()) for (const [status, n] of row) if (status >= 500) errors += n;
    const elapsed = Math.round((now - r.startedAt) / 1000);
    return `${r.scenario}: ${elapsed} s, ${rate.toFixed(1)} req/s sent of ${r.plannedPerSecond} planned, ${errors} error(s) so far`;
  }

  /** Plain lines every `everyMs` (not a terminal). */
  printEvery(write: (line: string) => void, everyMs: number): void {
    this.timer = setInterval(() => {
      const line = this.line();
      if (line) write(`${line}\n`);
    }, everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
