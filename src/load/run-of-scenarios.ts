/**
 * A whole `load` run of scenarios: the chosen ones in turn, the run's result (thresholds, findings),
 * its reports written and its closing lines. One scenario's run is src/load/scenario-run.ts.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLAUSE_BY_ID } from "../contract/index.js";
import {
  type CheckResult,
  collectFindings,
  type RunResult,
  redactValue,
  summaryLine,
  totalsOf,
  writeReports,
} from "../report/index.js";
import type { HarnessTarget } from "../target/harness-target.js";
import { capacityLines } from "./capacity/tally.js";
import { renderLoadHtml } from "./charts.js";
import { remainingLine } from "./concurrency-checks.js";
import type { LoadOptions, Scenario } from "./define.js";
import { brokenClauses, formatLatency, runScenario, type ScenarioReport, whyUnavailable } from "./scenario-run.js";
import { evaluateThreshold, type Threshold, type ThresholdResult, thresholdInputOf, thresholdMark } from "./thresholds.js";

/** The whole load run, as load.json holds it. */
export interface LoadRun {
  runId: string;
  startedAt: string;
  finishedAt: string;
  target: {
    kind: string;
    baseUrl: string;
    windowSeconds: number;
    messageTimeoutSeconds: number;
    /** the network the harness put between generator and service (--network-delay, --network-proxy) */
    network?: string;
  };
  scenarios: ScenarioReport[];
  thresholds: ThresholdResult[];
}

interface Output {
  write(text: string): unknown;
}

/** A progress line with elapsed and (estimated) remaining time; redrawn in place on a terminal. */
function progress(totalSeconds: number, err: Output & { isTTY?: boolean }, detail?: () => string | undefined) {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  let label = "";
  const draw = () => {
    const elapsed = (Date.now() - started) / 1000;
    const share = Math.min(1, elapsed / Math.max(1, totalSeconds));
    const width = 24;
    const bar = "#".repeat(Math.round(share * width)).padEnd(width, "-");
    const left = Math.max(0, totalSeconds - elapsed);
    if (err.isTTY)
      err.write(`\r\x1b[2K[${bar}] ${elapsed.toFixed(0)} s elapsed, ~${left.toFixed(0)} s left — ${detail?.() ?? label}`);
  };
  return {
    start(id: string, estimate: number) {
      label = id;
      if (!err.isTTY) err.write(`… ${id} (about ${estimate.toFixed(0)} s)\n`);
      timer ??= setInterval(draw, 500);
      draw();
    },
    stop() {
      if (timer) clearInterval(timer);
      if (err.isTTY) err.write("\r\x1b[2K");
    },
  };
}

/** A scenario's lines under its verdict: the clauses it saw broken, its latency, a saturated generator. */
function scenarioLines(report: ScenarioReport): string[] {
  return [
    ...brokenClauses(report),
    ...formatLatency(report),
    ...(report.capacity ? capacityLines(report.capacity) : []),
    ...(report.generator.saturated ? [`note: ${report.generator.note}`] : []),
    ...(report.remaining?.unjudged ? [`note: ${remainingLine(report.remaining)}`] : []),
  ];
}

/** A scenario's verdict line and the lines under it, as the terminal shows them. */
export function reportLines(report: ScenarioReport): string {
  const mark = { passed: "✓", failed: "✗", error: "!", inconclusive: "?", skipped: "-" }[report.status];
  const head = `${mark} ${report.id} ${report.status} (${(report.durationMs / 1000).toFixed(1)} s)${report.message ? ` — ${report.message}` : ""}`;
  return [head, ...scenarioLines(report).map((line) => `    ${line}`)].map((line) => `${line}\n`).join("");
}

/**
 * Run the chosen scenarios one after the other, each line as it ends; a scenario this target
 * cannot run is skipped with the reason. Stops between scenarios once `signal` aborts.
 */
export async function runScenarios(
  target: HarnessTarget,
  chosen: readonly Scenario[],
  signal: AbortSignal,
  out: Output,
  err: Output & { isTTY?: boolean },
  options: LoadOptions = {},
): Promise<ScenarioReport[]> {
  const total = chosen.reduce((n, s) => n + (s.unavailable?.(target, options) ? 0 : s.estimateSeconds(target, options)), 0);
  out.write(
    `target: ${target.kind} ${target.baseUrl} (W = ${target.windowSeconds} s, budget ${target.messageTimeoutSeconds} s); ${chosen.length} scenario(s), about ${Math.round(total)} s\n`,
  );
  const reports: ScenarioReport[] = [];
  const bar = progress(total, err, options.progressDetail);
  try {
    for (const scenario of chosen) {
      if (signal.aborted) break;
      bar.start(scenario.id, scenario.estimateSeconds(target, options));
      const report = await runScenario(target, scenario, signal, options);
      reports.push(report);
      bar.stop();
      out.write(reportLines(report));
    }
  } finally {
    bar.stop();
  }
  return reports;
}

/**
 * `load --dry-run`: the plan of the scenarios chosen, and nothing sent but the reachability probe.
 * Each scenario that would run with its clauses and time; each that would be skipped with the
 * reason its `unavailable` gives (the flag that enables it). The count is what the run's report
 * counts as run: the scenarios this target can run, and the thresholds once any of them ran.
 */
export function loadPlanLines(
  target: HarnessTarget,
  chosen: readonly Scenario[],
  thresholds: readonly Threshold[],
  options: LoadOptions = {},
): string[] {
  const why = (s: Scenario) => whyUnavailable(s, target, options);
  const runs = chosen.filter((s) => why(s) === undefined);
  const judged = runs.length > 0 ? thresholds.length : 0;
  return [
    `dry run: ${chosen.length} scenario(s) chosen against ${target.kind} ${target.baseUrl} (W = ${target.windowSeconds} s, budget ${target.messageTimeoutSeconds} s)`,
    ...runs.map(
      (s) => `  ${s.id}: ${s.title} — ${s.clauses.join(", ")}; about ${Math.round(s.estimateSeconds(target, options))} s`,
    ),
    `will run: ${runs.length + judged} checks (load ${runs.length}${judged ? `, thresholds ${judged}` : ""})`,
    ...chosen.flatMap((s) => {
      const reason = why(s);
      return reason === undefined ? [] : [`skipped: ${s.id} — ${reason}`];
    }),
    "dry run: no scenario ran",
  ];
}

/** A scenario as a check of the run: its failures first, then the response checks' findings in it. */
function checkOf(r: ScenarioReport): CheckResult {
  const broken = brokenClauses(r);
  const message = broken.length ? broken.join("\n") : r.message;
  const atFault = r.failures[0]?.clause ?? r.observations[0]?.clause;
  return {
    id: `load ${r.id}`,
    title: r.title,
    suite: "load",
    file: "src/load/scenarios",
    clauseIds: r.clauses,
    sections: [...new Set(r.clauses.map((id) => CLAUSE_BY_ID.get(id)?.section ?? "?"))],
    status: r.status,
    durationMs: r.durationMs,
    ...(message ? { message } : {}),
    ...(atFault ? { clauseAtFault: atFault } : {}),
  };
}

function thresholdCheck(t: ThresholdResult | { source: string; skipped: string }): CheckResult {
  const skipped = "skipped" in t;
  return {
    id: `threshold ${t.source}`,
    title: `threshold ${t.source}`,
    suite: "load",
    file: "thresholds",
    clauseIds: [],
    sections: [],
    status: skipped ? "skipped" : !t.judged ? "inconclusive" : t.passed ? "passed" : "failed",
    durationMs: 0,
    message: skipped ? t.skipped : t.observed,
  };
}

export interface LoadRunInput {
  runId: string;
  seed: number;
  startedAt: Date;
  target: Pick<HarnessTarget, "kind" | "baseUrl" | "windowSeconds" | "messageTimeoutSeconds">;
  /** the network the harness put between generator and service (src/net/behind-proxy.ts networkConditions) */
  network?: string | undefined;
  /** what verify's results.json records of the target and keys (targetOptions) */
  options: Omit<RunResult["options"], "suites" | "sections">;
  chosen: readonly Scenario[];
  reports: ScenarioReport[];
  thresholds: readonly Threshold[];
  interrupted: boolean;
}

/**
 * The run as verify's reports take it (each scenario and threshold a check; the response-level
 * findings deduplicated across scenarios, STYLE §10) and as load.json holds it. Thresholds judge
 * figures: with no scenario run there are none, and they are skipped, not failed.
 */
export function loadRunResult(input: LoadRunInput): { result: RunResult; loadRun: LoadRun } {
  const { target, reports } = input;
  const ran = reports.some((r) => r.status !== "skipped");
  const thresholds = ran ? input.thresholds.map((t) => evaluateThreshold(t, thresholdInputOf(reports))) : [];
  const finishedAt = new Date().toISOString();
  const loadRun: LoadRun = {
    runId: input.runId,
    startedAt: input.startedAt.toISOString(),
    finishedAt,
    target: {
      kind: target.kind,
      baseUrl: target.baseUrl,
      windowSeconds: target.windowSeconds,
      messageTimeoutSeconds: target.messageTimeoutSeconds,
      ...(input.network ? { network: input.network } : {}),
    },
    scenarios: reports,
    thresholds,
  };
  const scenarioChecks = reports.map(checkOf);
  const { findings, checks: judged } = collectFindings(
    scenarioChecks.map((check, i) => ({ check, observations: reports[i]!.observations })),
  );
  const checks = [
    ...judged,
    ...(ran ? thresholds : input.thresholds.map((t) => ({ source: t.source, skipped: "no scenario ran" }))).map(thresholdCheck),
  ];
  const result: RunResult = {
    runId: input.runId,
    startedAt: loadRun.startedAt,
    finishedAt,
    target: { kind: target.kind, baseUrl: target.baseUrl },
    seed: input.seed,
    options: {
      suites: ["load"],
      scenarios: input.chosen.map((s) => s.id),
      ...input.options,
      sections: null,
      thresholds: input.thresholds.map((t) => t.source),
    },
    checks,
    findings,
    ...(input.interrupted ? { interrupted: { done: reports.length, total: input.chosen.length } } : {}),
  };
  return { result, loadRun };
}

/** results.json, junit.xml and the rest as verify writes them; load.json; report.html with the load charts. */
export async function writeLoadReports(result: RunResult, loadRun: LoadRun, reportDir: string, secrets: string[]) {
  const written = await writeReports(result, reportDir, { secrets });
  writeFileSync(join(written.dir, "load.json"), `${JSON.stringify(redactValue(loadRun, secrets), null, 2)}\n`);
  writeFileSync(written.html, renderLoadHtml(result, loadRun, { secrets }));
  return written.dir;
}

/** The closing lines: each threshold, then verify's summary line (an error is not a failure). */
export function closingLines(result: RunResult, loadRun: LoadRun): string[] {
  return [
    ...loadRun.thresholds.map((t) => `${thresholdMark(t)} threshold ${t.source}: ${t.observed}`),
    "",
    summaryLine(totalsOf(result)),
  ];
}
