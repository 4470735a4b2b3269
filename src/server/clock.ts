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
  // Stryker disable next-line BlockStatement: timers left running: an ended exchange's budget timer aborts nothing, a stale heartbeat timer writes to an ended stream or adds a heartbeat early (PROFILE §5 sets a maximum gap, not a minimum); not observable over HTTP
  clearTimer(handle) {
    clearTimeout(handle.timeout);
  },
};

/**
 * The clock of a service whose clock is `skewMs` ahead (behind when negative) of the machine's:
 * every time it shows moves (Date, X-RateLimit-Reset, createdAt, updatedAt, PROFILE §4 and §7),
 * durations do not (windows, the message budget, heartbeats), so a harness can prove it judges
 * those times on the service's clock.
 */
export function skewedClock(clock: Clock, skewMs: number): Clock {
  if (skewMs === 0) return clock;
  return { now: () => clock.now() + skewMs, setTimer: clock.setTimer, clearTimer: clock.clearTimer };
}

/** Rejects with the signal's reason once it is aborted (and never settles otherwise). */
export const untilAborted = (signal: AbortSignal) =>
  new Promise<never>((_, reject) => {
    // Stryker disable BooleanLiteral,ObjectLiteral: an AbortSignal fires abort at most once: { once: true } changes nothing observable
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
// Stryker restore BooleanLiteral,ObjectLiteral

/** Resolves after `ms` of clock time, or rejects with the signal's reason when aborted. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    // Stryker disable next-line OptionalChaining: the one caller (mock-slow) always passes a signal
    if (signal?.aborted) return reject(signal.reason);
    // Stryker disable next-line BlockStatement: same pair: the next sleep sees the aborted signal and ends the exchange one chunk (≤ 100 ms) later
    const onAbort = () => {
      clock.clearTimer(handle);
      // Stryker disable next-line OptionalChaining: the reason of a client-gone abort is never answered to anyone (the client is gone)
      reject(signal?.reason);
    };
    const handle = clock.setTimer(ms, () => {
      // Stryker disable next-line OptionalChaining,StringLiteral: a listener left on a signal that then aborts calls clearTimer on a fired timer and rejects a settled promise: no effect
      signal?.removeEventListener("abort", onAbort);
      resolve();
    });
    // Stryker disable next-line BooleanLiteral,ObjectLiteral,OptionalChaining,StringLiteral: same pair as the already-aborted check: the next sleep ends the exchange one chunk later
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
