import { inject } from "vitest";
import { brokenClauses, remainingLine, runScenario, SCENARIOS, type Scenario, whyUnavailable } from "../../src/load/index.js";
import { check, expect, HarnessError, Inconclusive, target } from "../support/harness.js";

/** `verify` makes findings of the response-level observations; a plain vitest run has nothing that would */
const FINDINGS_COLLECTED = inject("findingsCollected") === true;

/**
 * The load scenarios (src/load/scenarios.ts) chosen by `select`, as checks. Each drives one
 * PROFILE sentence under parallel load and fails on its own failures; what verify's
 * response-level checks found in the answers (the client layers, src/checks/layer.ts) is handed
 * to verify's findings, one finding per defect across every suite, as the functional checks do.
 */
export function scenarioChecks(select: (scenario: Scenario) => boolean): void {
  for (const scenario of SCENARIOS.filter(select)) scenarioCheck(scenario);
}

function scenarioCheck(scenario: Scenario): void {
  check(scenario.clauses, `load: ${scenario.title}`, async ({ skip, task }) => {
    // what the load command skips, the check skips: behind an HTTP proxy a raw-socket scenario too
    const unavailable = whyUnavailable(scenario, target);
    if (unavailable) skip(unavailable);
    const report = await runScenario(target, scenario);
    // a scenario that ran nothing is never a pass
    if (report.status === "skipped") skip(report.message ?? "skipped");
    const judged = { failures: report.failures, observations: FINDINGS_COLLECTED ? [] : report.observations };
    // a broken clause makes the scenario failed (src/load/scenario-run.ts): an error is one that could not judge
    if (report.status === "error") throw new HarnessError(report.message ?? "scenario error");
    if (report.status === "inconclusive") throw new Inconclusive(report.message ?? "scenario inconclusive");
    if (report.observations.length) task.meta.observations = report.observations;
    // a judgement that judged none of its answers (the Remaining one at W = 1 s) is said beside the verdict
    if (report.remaining?.unjudged) task.meta.note = remainingLine(report.remaining);
    // in words: each broken clause in its clause's terms, then whether the generator kept up
    expect(brokenClauses(judged)).toBreakNoClause(report.generator.note);
  });
}
