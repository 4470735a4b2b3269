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

/** Rejects with the signal's reason once it is aborted (and never settles otherwise). */
export const untilAborted = (signal: AbortSignal) =>
  new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });

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
