import { inject } from "vitest";
import { clockReading, takeHandedClock } from "../../src/client/index.js";
import { keyIndexFor } from "../../src/plan/footprint.js";
import { type HarnessTarget, targetSecrets, workerTarget } from "../../src/target/harness-target.js";
import { claimDirFor, claimKeySet } from "../../src/target/key-set-claim.js";

declare module "vitest" {
  export interface ProvidedContext {
    target: HarnessTarget;
    /** `verify` collects findings from the tests' observations; a plain vitest run has nothing that would */
    findingsCollected?: boolean;
  }
}

/**
 * This worker's key set: one no other live worker holds, claimed by PID for the run
 * (src/target/key-set-claim.ts); VITEST_POOL_ID repeats across projects of one vitest run.
 */
// mutation mode (`npm run mutation`) starts the server in this worker: suites/support/worker-target.ts
const provided = globalThis.agentHarnessWorkerTarget ?? inject("target");
const claimed = workerTarget(
  provided,
  (provided.keyPool?.length ?? 0) > 1 ? claimKeySet(claimDirFor(provided), provided.keyPool!.length) : 1,
);
/** …with the service's clock, which a run estimates while its workers start (src/client/clock-handover.ts) */
export const target: HarnessTarget =
  claimed.serviceClock || !claimed.serviceClockFile
    ? claimed
    : { ...claimed, serviceClock: takeHandedClock(claimed.serviceClockFile) };
export const FINDINGS_COLLECTED = inject("findingsCollected") === true;

/**
 * The service's clock (PROFILE §4, §7 times are on it): its offset from this runner's as `verify`
 * estimated it from the Date header, and the difference tolerated; without an estimate none is
 * tolerated for a server on this very machine, 2 s for a deployment.
 */
export const SERVICE_CLOCK = clockReading(target.serviceClock, target.kind === "external" ? 2 : 0);
/** Every key of the run: none may appear in any response (PROFILE §6). */
export const ALL_KEYS = targetSecrets(target);

/** Each check takes one key of the main account, by its name: per-key buckets are spread over the keys. */
export function mainKeyFor(checkName: string): string {
  const keys = target.keys.mainKeys?.length ? target.keys.mainKeys : [target.keys.main];
  return keys[keyIndexFor(checkName, keys.length)]!;
}
