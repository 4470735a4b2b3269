import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { z } from "zod";
import { ESTIMATE_BOUND_MS, type ServiceClock, ServiceClockSchema } from "./service-clock.js";

/**
 * A service the run started itself has its clock estimated while the suites' workers start (the
 * estimate waits for a turn of the Date header's second, about half a second; starting the workers
 * takes longer): the run writes the estimate to a file, and each worker reads it before its first
 * check, waiting for it if it has not come yet. A failed estimate is written too, so no worker
 * waits out its bound for it.
 */

const Handed = z.union([z.object({ clock: ServiceClockSchema }), z.object({ failed: z.string() })]);

/** Writes the estimate (or why there is none) whole: a reader never sees half a file. */
export function handOverClock(file: string, outcome: { clock: ServiceClock } | { failed: string }): void {
  mkdirSync(dirname(file), { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, JSON.stringify(outcome));
  renameSync(partial, file);
}

/**
 * How long a worker waits for the estimate before it gives up: as long as the estimate may take
 * (about half a second on a service the run started; a failed one is handed over at once).
 */
export const CLOCK_HANDOVER_BOUND_MS = ESTIMATE_BOUND_MS + 5_000;
const POLL_MS = 10;

/**
 * The estimate the run handed over in `file`, waited for (synchronously: a worker reads it as its
 * modules load, before any check) at most `boundMs`. Throws when the estimate failed or never came.
 */
export function takeHandedClock(file: string, boundMs = CLOCK_HANDOVER_BOUND_MS, now = Date.now): ServiceClock {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const deadline = now() + boundMs;
  while (!existsSync(file)) {
    if (now() >= deadline)
      throw new Error(`the service's clock was not estimated within ${Math.round(boundMs / 1000)} s (${file})`);
    Atomics.wait(pause, 0, 0, POLL_MS);
  }
  const handed = Handed.parse(JSON.parse(readFileSync(file, "utf8")));
  if ("failed" in handed) throw new Error(`the service's clock could not be estimated: ${handed.failed}`);
  return handed.clock;
}
