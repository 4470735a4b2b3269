import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { exitCodeOf, inconclusiveLine, renderJunit } from "../report/index.js";
import { renderLoadHtml } from "./charts.js";
import { InconclusiveError, ScenarioSetupError } from "./context.js";
import type { Scenario } from "./define.js";
import { loadPlanLines, loadRunResult, writeLoadReports } from "./run-of-scenarios.js";
import { runScenario } from "./scenario-run.js";
import { deploymentAt, recordingScenario } from "./test-support.js";
import { parseThreshold, type Threshold } from "./thresholds.js";

const target = deploymentAt("http://127.0.0.1:9/v1", { windowSeconds: 2 });
const passing = recordingScenario(() => {}, undefined, "passing");
const skipped: Scenario = { ...passing, id: "skipped", unavailable: () => "needs --reference-faults" };
const failing: Scenario = {
  ...passing,
  id: "failing",
  run: async (ctx) => ctx.fail("limits.429", "unit", "exactly 10 admitted", "11 admitted"),
};
const erring: Scenario = {
  ...passing,
  id: "erring",
  run: async () => {
    throw new ScenarioSetupError("the target refused a plain create");
  },
};
const undecided: Scenario = {
  ...passing,
  id: "undecided",
  run: async () => {
    throw new InconclusiveError("the window turned in every burst");
  },
};
const p99 = parseThreshold("p99<250");
if (typeof p99 === "string") throw new Error(p99);

async function runOf(scenarios: Scenario[], thresholds: Threshold[] = []) {
  const reports = await Promise.all(scenarios.map((s) => runScenario(target, s)));
  return loadRunResult({
    runId: "unit",
    seed: 1,
    startedAt: new Date(),
    target,
    options: {
      windowSeconds: 2,
      messageTimeoutSeconds: 30,
      tierLimit: null,
      referenceFaults: false,
      idField: "id",
      faults: [],
      keys: { main: 1 },
    },
    chosen: scenarios,
    reports,
    thresholds,
    interrupted: false,
  });
}

/** `agent-harness load` exits as `verify` does (STYLE §7): the run's result decides, through exitCodeOf. */
describe("the exit code of a load run", () => {
  test("0 when every scenario that ran passed", async () => {
    expect(exitCodeOf((await runOf([passing, skipped])).result)).toBe(0);
  });

  test("1 on a finding, whatever else passed", async () => {
    const { result } = await runOf([passing, failing]);
    expect(exitCodeOf(result)).toBe(1);
    expect(result.findings?.map((f) => [f.kind, f.clauseIds])).toEqual([["check", ["limits.429"]]]);
  });

  test("2 when nothing ran: every scenario skipped, and a threshold has no figure to judge (skipped, not failed)", async () => {
    const { result, loadRun } = await runOf([skipped], [p99]);
    expect(exitCodeOf(result)).toBe(2);
    expect(result.checks.map((c) => [c.id, c.status])).toEqual([
      ["load skipped", "skipped"],
      ["threshold p99<250", "skipped"],
    ]);
    expect(loadRun.thresholds).toEqual([]);
  });

  test("2 when a latency threshold had no answer of its outcome to judge (a conformant service gave no 5xx): no verdict, never a failure", async () => {
    const other = parseThreshold("p99[other]<100");
    if (typeof other === "string") throw new Error(other);
    const { result, loadRun } = await runOf([passing], [other]);
    expect(exitCodeOf(result)).toBe(2);
    expect(result.findings).toEqual([]);
    expect(result.checks.map((c) => [c.id, c.status])).toEqual([
      ["load passing", "passed"],
      ["threshold p99[other]<100", "inconclusive"],
    ]);
    expect(renderLoadHtml(result, loadRun)).toContain("? p99[other]&lt;100");
  });

  test("2 when a scenario could not judge: an error, never counted as failed", async () => {
    const { result } = await runOf([passing, erring]);
    expect(exitCodeOf(result)).toBe(2);
    expect(result.checks.map((c) => c.status)).toEqual(["passed", "error"]);
    expect(result.findings).toEqual([]);
  });

  test("2 when a scenario's measurement was inconclusive, the reason on the run's last line; load.json, JUnit and HTML say inconclusive", async () => {
    const { result, loadRun } = await runOf([passing, undecided]);
    expect(exitCodeOf(result)).toBe(2);
    expect(loadRun.scenarios.map((s) => s.status)).toEqual(["passed", "inconclusive"]);
    expect(inconclusiveLine(result)).toMatch(
      /^inconclusive: 1 check could not be judged, a load measurement .*\(InconclusiveError: the window turned in every burst\); no finding; exit 2$/,
    );
    expect(renderJunit(result)).toMatch(/<skipped message="inconclusive: InconclusiveError: the window turned in every burst"/);
    expect(renderLoadHtml(result, loadRun)).toContain("INCONCLUSIVE: a load measurement");
  });

  test("load.json is scrubbed of keys as every other report is", async () => {
    const key = "sk_test_load_3c1f9e";
    const { result, loadRun } = await runOf([passing]);
    const dir = mkdtempSync(join(tmpdir(), "agent-harness-load-reports-"));
    try {
      const echoed = { ...loadRun, scenarios: loadRun.scenarios.map((s) => ({ ...s, message: `the server echoed ${key}` })) };
      const written = await writeLoadReports(result, echoed, dir, [key]);
      const json = readFileSync(join(written, "load.json"), "utf8");
      expect(json).toContain("the server echoed ***");
      expect(json).not.toContain(key);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("1 when a finding sits beside an inconclusive scenario: what the target broke is the verdict", async () => {
    const { result } = await runOf([failing, undecided]);
    expect(exitCodeOf(result)).toBe(1);
    expect(inconclusiveLine(result)).toBeUndefined();
  });
});

/** `load --dry-run` promises what the run reports: the same count of checks run, and every skip with its reason. */
describe("the plan of a load dry run", () => {
  test.for([
    { name: "one runs, one skipped, a threshold", scenarios: [passing, skipped], thresholds: [p99] },
    { name: "every one skipped: the threshold too", scenarios: [skipped], thresholds: [p99] },
    { name: "two run, no threshold", scenarios: [passing, failing], thresholds: [] },
  ])("$name", async ({ scenarios, thresholds }) => {
    const lines = loadPlanLines(target, scenarios, thresholds);
    const { result } = await runOf(scenarios, thresholds);
    const ran = result.checks.filter((c) => c.status !== "skipped").length;
    expect(lines.join("\n")).toContain(`will run: ${ran} checks`);
    for (const s of scenarios.filter((s) => s.unavailable))
      expect(lines).toContain(`skipped: ${s.id} — needs --reference-faults`);
    expect(lines.at(-1)).toBe("dry run: no scenario ran");
  });
});
