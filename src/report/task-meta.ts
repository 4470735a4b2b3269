import type { Observation } from "./findings.js";
import type { Evidence } from "./model.js";

/**
 * What a check leaves on its vitest task for the report: the one augmentation of TaskMeta,
 * written by suites/support/harness.ts and read by src/cli/run-suites.ts.
 */
declare module "@vitest/runner" {
  interface TaskMeta {
    /** the PROFILE clauses the check cites */
    clauseIds?: string[];
    /** the exchanges a failure shows */
    evidence?: Evidence[];
    /** the failure is the harness's (bad config, unreachable target), not the target's */
    harnessError?: boolean;
    /** response-level violations seen in the test: findings are made of them across workers (STYLE §10) */
    observations?: Observation[];
    /** an earlier defect kept the test from running (its setup failed) */
    blocked?: boolean;
    /** the clause the failure broke, when narrower than the check's own */
    clauseAtFault?: string;
  }
}
