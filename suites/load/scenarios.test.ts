import { formatFinding, runScenario, SCENARIOS } from "../../src/load/index.js";
import { check, expect, HarnessError, target } from "../support/harness.js";

/**
 * Issue 9: the load scenarios (src/load/scenarios.ts) as checks. Each drives one PROFILE
 * sentence under parallel load and fails on any finding: its own assertions, or a
 * response-level check of verify on an answer it received.
 */
for (const scenario of SCENARIOS)
  check(scenario.clauses, `load: ${scenario.title}`, async ({ skip }) => {
    const unavailable = scenario.unavailable?.(target);
    if (unavailable) skip(unavailable);
    const report = await runScenario(target, scenario);
    if (report.status === "error" && report.findings.length === 0) throw new HarnessError(report.message ?? "scenario error");
    expect(report.findings.map(formatFinding), report.generator.note).toEqual([]);
  });
