import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { RATE_LIMITS } from "../contract/index.js";
import {
  deploymentPropertyRequests,
  EMBEDDED_DEFAULTS,
  type HarnessTarget,
  startReferenceTarget,
} from "../target/harness-target.js";
import { type FootprintEntry, readFootprint } from "./footprint.js";
import { usesAccountLanes } from "./lanes.js";

/**
 * The request footprint of a run, found by running the same suites against an embedded
 * reference shaped like the target: the same keys (how many main keys; which of read-only,
 * other-account and quota keys), the same tier and capabilities. Checks that cannot run there
 * (a missing key) skip here too. The reference answers at once with a short window, so this
 * takes seconds, and the counts follow the suites as they change: no table to keep.
 */
export interface CalibrationShape {
  /** the target the plan is for: its keys, tier and capabilities (never contacted here) */
  target: HarnessTarget;
  /** run the suites; the embedded target to run them against is given */
  runSuites: (target: HarnessTarget) => Promise<unknown>;
}

export async function calibrate({ target, runSuites }: CalibrationShape): Promise<{
  entries: FootprintEntry[];
  seconds: number;
}> {
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), "agent-harness-plan-"));
  const mainKeys = target.keys.mainKeys?.length ?? 1;
  const reference = await startReferenceTarget(
    "embedded",
    {
      ...EMBEDDED_DEFAULTS,
      // a tier the target does not say is none of the bound's business: a wide one here
      tierLimit: target.tierLimit ?? RATE_LIMITS.tiers.pro,
      mainKeys,
      ...(target.loadTiers?.tierBurst !== undefined ? { tierBurstTier: target.loadTiers.tierBurst } : {}),
    },
    { runPrefix: target.runPrefix, ledgerFile: join(dir, "ledger.jsonl"), seed: target.seed },
  );
  try {
    const shaped = (keys: HarnessTarget["keys"]): HarnessTarget["keys"] => ({
      main: keys.main,
      mainKeys: keys.mainKeys ?? [keys.main],
      ...(target.keys.readOnly && keys.readOnly ? { readOnly: keys.readOnly } : {}),
      ...(target.keys.otherAccount && keys.otherAccount ? { otherAccount: keys.otherAccount } : {}),
      ...(target.keys.quota && keys.quota ? { quota: keys.quota } : {}),
      // the load scenarios' accounts, and the functional tier checks that take the small-tier one
      ...(target.keys.load && keys.load ? { load: keys.load } : {}),
      ...(target.keys.tierBurst && keys.tierBurst ? { tierBurst: keys.tierBurst } : {}),
    });
    const { tierLimit: _t, messageQuota: _q, ...rest } = reference.target;
    const footprintFile = join(dir, "footprint.jsonl");
    await runSuites({
      ...rest,
      keys: shaped(reference.target.keys),
      ...(reference.target.keyPool ? { keyPool: reference.target.keyPool.map(shaped) } : {}),
      ...(target.tierLimit !== undefined ? { tierLimit: target.tierLimit } : {}),
      ...(target.referenceFaults ? { messageQuota: reference.target.messageQuota } : {}),
      referenceFaults: target.referenceFaults,
      // the run's account lanes, if it has them: the calibration spends the same accounts' tiers
      accountLanes: usesAccountLanes(target),
      // the property suites size themselves by the target's budget, not the reference's (no cap)
      property: { ...target.property, maxRequests: target.property?.maxRequests ?? deploymentPropertyRequests(target) },
      footprintFile,
    });
    return { entries: readFootprint(footprintFile), seconds: (performance.now() - started) / 1000 };
  } finally {
    await reference.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
