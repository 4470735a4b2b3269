/**
 * Time as the client sees it: `now()` in epoch milliseconds and `sleep(ms)`. Pacing and retry
 * take it injected, so their unit tests run on a fake clock with no real waiting.
 */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms))),
};

/**
 * A clock that only moves when someone sleeps on it: `sleep(ms)` advances `now()` by `ms` and
 * resolves at once. `sleeps` records every wait, so a test asserts on decisions, not timings.
 */
export class FakeClock implements Clock {
  readonly sleeps: number[] = [];
  private current: number;

  constructor(startMs = Date.UTC(2026, 10, 22, 12, 0, 0)) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  async sleep(ms: number): Promise<void> {
    const wait = Math.max(0, ms);
    this.sleeps.push(wait);
    this.current += wait;
  }

  /** Move time without anyone waiting (e.g. the server's window passing between requests). */
  advance(ms: number): void {
    this.current += ms;
  }
}
