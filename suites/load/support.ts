import { inject } from "vitest";
import { formatFinding, runScenario, SCENARIOS, type Scenario } from "../../src/load/index.js";
import { ConformanceFailure, check, expect, HarnessError, target } from "../support/harness.js";

/** `verify` makes findings of the response-level observations; a plain vitest run has nothing that would */
const FINDINGS_COLLECTED = inject("findingsCollected") === true;

/**
 * Issue 9: the load scenarios (src/load/scenarios.ts) chosen by `select`, as checks. Each drives
 * one PROFILE sentence under parallel load and fails on its own findings; what verify's
 * response-level checks found in the answers (the client layers, src/checks/layer.ts) is handed
 * to verify's findings, deduplicated with the other suites' (issue 7), as the functional checks do.
 */
export function scenarioChecks(select: (scenario: Scenario) => boolean): void {
  for (const scenario of SCENARIOS.filter(select)) scenarioCheck(scenario);
}

function scenarioCheck(scenario: Scenario): void {
  check(scenario.clauses, `load: ${scenario.title}`, async ({ skip, task }) => {
    const unavailable = scenario.unavailable?.(target);
    if (unavailable) skip(unavailable);
    const report = await runScenario(target, scenario);
    if (report.status === "error" && report.findings.length === 0) throw new HarnessError(report.message ?? "scenario error");
    if (report.observations.length) task.meta.observations = report.observations;
    const own = report.findings.filter((f) => f.kind === "scenario" || !FINDINGS_COLLECTED);
    // in words (issue 7): each finding in its clause's terms, then whether the generator kept up
    if (own.length) throw new ConformanceFailure(`${own.map(formatFinding).join("\n")}\n${report.generator.note}`);
    expect(own).toEqual([]);
  });
}
