import type { CheckResult } from "../report/index.js";

/** A check as collected, before it ran: what a report names of one that never reported. */
export type PlannedCheck = Pick<CheckResult, "id" | "title" | "suite" | "file">;

/**
 * A run never says green for what it did not run: every check it planned — each test vitest
 * collected for the selection, and on a deployment each the plan's calibration ran (what
 * `--dry-run` counts) — is reported, as run or as skipped with the reason. What is not:
 * - stopped by `--bail` after a failed check: reported skipped, naming the flag;
 * - stopped by an interruption or the run's bound: those say so themselves (exit 130, run.bound);
 * - otherwise: a harness error (exit 2), naming the checks, never a pass.
 */
export interface CompletenessInput {
  /** the checks the run collected before it started */
  planned: readonly PlannedCheck[];
  /** on a deployment, the checks of the plan's calibration (those it skipped are not promised) */
  calibrated?: readonly CheckResult[];
  /** what the run reported */
  checks: readonly CheckResult[];
  bail: boolean;
  /** interrupted, or stopped at its bound */
  stopped: boolean;
}

export const COMPLETENESS_ID = "run.complete";

/** Why a check did not run after a failure, naming the flag: a skip is never silent. */
export const NOT_RUN_AFTER_BAIL = "not run: --bail stopped the run at the first failed check (without --bail it runs)";
/** Why a check that was running did not end: another's failure under --bail stopped it, its verdict unknown. */
export const STOPPED_BY_BAIL =
  "stopped before its end: --bail stopped the run at the first failed check, elsewhere (without --bail it runs to its end)";
/** Why a check did not run, or did not end, when the run itself was stopped (an interruption, its bound). */
export const NOT_RUN_AFTER_STOP = "not run: the run was stopped before it";
export const STOPPED_BY_STOP = "stopped before its end: the run was stopped while it ran";

/**
 * The rows a run adds for the checks it planned and did not report: skipped ones (--bail), or one
 * harness error; with the error, the line the run ends on.
 */
export function unreportedRows({ planned, calibrated = [], checks, bail, stopped }: CompletenessInput): {
  rows: CheckResult[];
  shortfall?: string;
} {
  if (stopped) return { rows: [] };
  const reported = new Set(checks.map((c) => c.id));
  const promised = new Map<string, PlannedCheck>();
  for (const check of [...planned, ...calibrated.filter((c) => c.status !== "skipped")]) promised.set(check.id, check);
  const missing = [...promised.values()].filter((c) => !reported.has(c.id));
  if (!missing.length) return { rows: [] };
  const failed = checks.some((c) => c.status === "failed" || c.status === "blocked" || c.status === "error");
  if (bail && failed)
    return {
      rows: missing.map((c) => ({
        ...c,
        clauseIds: [],
        sections: [],
        status: "skipped" as const,
        durationMs: 0,
        message: NOT_RUN_AFTER_BAIL,
      })),
    };
  const named = missing.slice(0, 5).map((c) => `"${c.title}" (${c.file ?? c.suite})`);
  const more = missing.length > named.length ? ` and ${missing.length - named.length} more` : "";
  const shortfall = `harness error: the run reported ${promised.size - missing.length} of the ${promised.size} checks it planned (${missing.length} neither ran nor were skipped): not a pass`;
  const row: CheckResult = {
    id: COMPLETENESS_ID,
    title: "every check the run planned runs or is reported skipped",
    suite: "run",
    clauseIds: [],
    sections: [],
    status: "error",
    durationMs: 0,
    message: `${shortfall}: ${named.join(", ")}${more}`,
  };
  return { rows: [row], shortfall };
}
