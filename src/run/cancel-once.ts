import type { Vitest } from "vitest/node";

/**
 * Makes `vitest.cancelCurrentRun` once per run: a call while a cancel is under way joins it.
 *
 * Under `--bail` every worker whose test fails asks vitest to cancel the run (its worker-side
 * `onAfterRunTask` calls the main side's `onCancel`). When two files fail within one round trip
 * of each other, the second ask arrives while the first cancel is still under way, and vitest's
 * pool takes a second cancel for a forced one (a user's Ctrl+C twice): it kills the workers
 * before they send the results of the tests that failed. The run then reports neither failure,
 * and the harness can only call it a harness error. Measured with four files failing at one
 * instant, `bail: 1`: no failure reported in 4 of 8 runs; with this, all four in 8 of 8.
 * (vitest 4.1; vitest-dev/vitest#8852 is another race of the same cancel.)
 */
export function cancelOnce(vitest: Vitest): void {
  const cancel = vitest.cancelCurrentRun.bind(vitest);
  let pending: Promise<void> | undefined;
  vitest.cancelCurrentRun = (reason) => {
    pending ??= cancel(reason);
    return pending;
  };
}
