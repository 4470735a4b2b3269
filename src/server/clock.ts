/**
 * Time for the server: rate-limit windows, the message budget, slow-model pacing and
 * heartbeats all read this clock, so tests drive them with a ManualClock instead of waiting.
 */
export interface Clock {
  now(): number;
  setTimer(ms: number, fn: () => void): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}
/** Opaque to callers: each clock keeps what it needs in it. */
export type TimerHandle = { readonly id: number; readonly timeout?: NodeJS.Timeout };

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    return { id: 0, timeout: setTimeout(fn, ms) };
  },
  clearTimer(handle) {
    clearTimeout(handle.timeout);
  },
};

/** Resolves after `ms` of clock time, or rejects with the signal's reason when aborted. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clock.clearTimer(handle);
      reject(signal?.reason);
    };
    const handle = clock.setTimer(ms, () => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    });
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** A clock that moves only when told to; timers fire in order as it advances. */
export class ManualClock implements Clock {
  private current: number;
  private seq = 0;
  private timers: { id: number; at: number; fn: () => void }[] = [];

  constructor(start = Date.UTC(2026, 10, 21, 12, 0, 0)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(ms: number, fn: () => void): TimerHandle {
    const timer = { id: ++this.seq, at: this.current + Math.max(0, ms), fn };
    this.timers.push(timer);
    return { id: timer.id };
  }

  clearTimer(handle: TimerHandle): void {
    this.timers = this.timers.filter((t) => t.id !== handle.id);
  }

  /** Move time forward, firing due timers in order; lets promise callbacks run between them. */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    for (let guard = 0; guard < 100_000; guard++) {
      const due = this.timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.current = Math.max(this.current, due.at);
      due.fn();
      await flushMicrotasks();
    }
    this.current = target;
    await flushMicrotasks();
  }
}

async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}
