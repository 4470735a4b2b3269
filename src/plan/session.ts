import { performance } from "node:perf_hooks";
import type { CheckResult } from "../report/index.js";
import type { HarnessTarget } from "../target/harness-target.js";
import { calibrate } from "./calibrate.js";
import type { FootprintEntry } from "./footprint.js";
import { type NeedsOf, planShares } from "./lanes.js";
import { formatPlan, formatSeconds, type PlanLimits, planRun, type RunPlan, secondsLeft, withActual } from "./plan.js";

/** The end-of-run sweep's request: one page of the main account's agents (more only if some were left). */
const SWEEP: FootprintEntry = { check: "run.cleanup", key: "main#0", account: "main", endpoint: "listAgents", counted: true };

/**
 * `verify` against an external target: plan the run before sending anything, show the plan's
 * estimate of the time left as checks finish, and measure the run against the plan's bound.
 */
export class PlannedRun {
  private readonly done = new Set<string>();
  private started = 0;

  private constructor(
    readonly plan: RunPlan,
    private readonly entries: FootprintEntry[],
    private readonly limits: PlanLimits,
  ) {}

  /**
   * Calibrate against an embedded reference shaped like `target`, running the same suites;
   * `needsOf` reads what each suite file declared (the order of a lane's files, the hand-off).
   */
  static async calibrate(
    target: HarnessTarget,
    runSuites: (t: HarnessTarget) => Promise<unknown>,
    needsOf: NeedsOf,
  ): Promise<PlannedRun> {
    const { entries: suites, seconds } = await calibrate({ target, runSuites });
    // the run ends with the sweep (src/run/cleanup.ts): it lists the account to prove nothing is left
    const entries = [...suites, SWEEP];
    // the lanes the calibration ran are the run's: the same files, keys and tier
    const shares = planShares([...new Set(suites.flatMap((e) => (e.lane === undefined ? [] : [e.lane])))]);
    const limits = {
      windowSeconds: target.windowSeconds,
      tierLimit: target.tierLimit,
      mainKeys: target.keys.mainKeys?.length ?? 1,
      // two lanes share the quota account, each within its part of its buckets (src/plan/lanes.ts)
      ...(shares ? { shares } : {}),
      needsOf,
    };
    const source = `calibration run of the same suites against an embedded reference (${formatSeconds(seconds)})`;
    return new PlannedRun(planRun(entries, limits, source), entries, limits);
  }

  describe(): string {
    return formatPlan(this.plan);
  }

  start(): void {
    this.started = performance.now();
  }

  /** After a check: the plan's bound for the checks not yet done, e.g. "≥ 12 min 0 s left by the plan". */
  progress(check: CheckResult): string {
    this.done.add(`${check.file}::${check.id}`);
    return `≥ ${formatSeconds(secondsLeft(this.entries, this.done, this.limits))} left by the plan`;
  }

  /** The plan with the run's actual time and the ratio to the bound. */
  finish(): RunPlan {
    return withActual(this.plan, (performance.now() - this.started) / 1000);
  }
}

export function formatRatio(plan: RunPlan): string {
  const actual = formatSeconds(plan.actualSeconds ?? 0);
  return plan.ratio === undefined
    ? `plan: ran in ${actual}; lower bound ${formatSeconds(plan.lowerBoundSeconds)} (one window: no ratio)`
    : `plan: ran in ${actual}; lower bound ${formatSeconds(plan.lowerBoundSeconds)}; actual / bound = ${plan.ratio.toFixed(2)}`;
}
