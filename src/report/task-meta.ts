import type { Observation } from "./findings.js";
import type { Evidence } from "./model.js";
import type { Verdict } from "./verdict.js";

/**
 * What a check leaves on its vitest task for the report: the one augmentation of TaskMeta,
 * written by suites/support/harness.ts and read by src/run/suites.ts.
 */
declare module "@vitest/runner" {
  interface TaskMeta {
    /** the PROFILE clauses the check cites */
    clauseIds?: string[];
    /** the exchanges a failure shows */
    evidence?: Evidence[];
    /** response-level violations seen in the test: findings are made of them across workers (STYLE §10) */
    observations?: Observation[];
    /** a failed test's verdict, read from its errors where they were thrown (src/report/verdict.ts) */
    verdict?: Verdict;
    /** what the check could not judge of what it saw, and why: its CheckResult's note */
    note?: string;
  }
}
