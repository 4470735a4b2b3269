import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { CLAUSE_BY_ID, MESSAGE_TIMING } from "../contract/index.js";
import { renderLoadHtml } from "../load/charts.js";
import {
  evaluateThreshold,
  formatFinding,
  formatLatency,
  parseThreshold,
  runScenario,
  SCENARIO_IDS,
  SCENARIOS,
  type ScenarioReport,
  type Threshold,
  type ThresholdResult,
  thresholdInputOf,
} from "../load/index.js";
import { type CheckResult, collectFindings, type RunResult, writeReports } from "../report/index.js";
import { commaList, optionsHelp, parseOrHelp, parseVerifyConfig, readOptions, UsageError, VERIFY_OPTIONS } from "./config.js";
import { assertReachable, interruptible, newRun, startTarget, targetOptions } from "./verify.js";

/** `load` takes verify's target options (minus suite selection) and its own. */
export const LOAD_OPTIONS = {
  ...Object.fromEntries(Object.entries(VERIFY_OPTIONS).filter(([name]) => !["suites", "sections", "bail"].includes(name))),
  scenario: {
    flag: "scenario",
    env: "AGENT_HARNESS_SCENARIO",
    type: "string",
    help: `comma-separated scenarios (default: all): ${SCENARIO_IDS.join(", ")}`,
  },
  threshold: {
    flag: "threshold",
    env: "AGENT_HARNESS_THRESHOLD",
    type: "string",
    multiple: true,
    help: "pass/fail on a figure (repeatable): 'p99<250' (ms, every endpoint, 2xx answers only), 'p99[429]<50' (the 429s; also [other]), 'errors<0.1%' (5xx and transport errors; 429s are outcomes), 'rps>100'",
  },
  allowRemoteLoad: {
    flag: "allow-remote-load",
    env: "AGENT_HARNESS_ALLOW_REMOTE_LOAD",
    type: "boolean",
    help: "allow load on a base URL that is not loopback (stays within each scenario's bounds)",
  },
} as const;

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

const loadSchema = z.object({
  scenario: commaList(z.enum(SCENARIO_IDS, { error: `--scenario takes: ${SCENARIO_IDS.join(", ")}` })).optional(),
  threshold: z.array(z.string()).default([]),
  allowRemoteLoad: z.boolean().default(false),
});

export const LOAD_USAGE = `usage: agent-harness load [options]

Drives the load scenarios (issue 9) against the embedded reference server (default), a
container, or --base-url; writes reports/<run-id>/load.json and report.html with charts.
Options (each also read from the env var shown):
${optionsHelp(LOAD_OPTIONS)}

Latency is kept per endpoint and per outcome — 2xx admitted, 429 refused, other — and each
figure says how many answers it rests on: a 429 is answered at once and would flatter the
percentiles of the work the target did.

A latency threshold (p50 p90 p95 p99 p99.9 max mean) judges the 2xx answers unless it names
another outcome (p99[429]<50, p99[other]<100), on every endpoint of the throughput scenario or,
when it did not run, of every scenario whose latencies hold no intended wait; these hold
mock-slow, held streams or the message budget on purpose and are never judged:
${SCENARIOS.filter((s) => !s.latency.judged)
  .map((s) => s.id)
  .join(", ")}.
A latency threshold with no such answer to judge fails.

errors<N% counts 5xx answers and transport errors among all answers: a 429 is an outcome the
scenarios expect, and one a scenario did not expect is a finding of that scenario.

exit codes: 0 every scenario and threshold passed; 1 a finding or a threshold broke; 2 bad usage
or target unreachable; 130 interrupted`;

/** The whole load run, as load.json holds it. */
export interface LoadRun {
  runId: string;
  startedAt: string;
  finishedAt: string;
  target: { kind: string; baseUrl: string; windowSeconds: number; messageTimeoutSeconds: number };
  scenarios: ScenarioReport[];
  thresholds: ThresholdResult[];
}

function parseLoadArgs(argv: string[]) {
  const loadOnly = ["scenario", "threshold", "allow-remote-load"];
  const raw = readOptions(argv, LOAD_OPTIONS, process.env);
  const parsed = loadSchema.safeParse({ scenario: raw.scenario, threshold: raw.threshold, allowRemoteLoad: raw.allowRemoteLoad });
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => i.message).join("\n"));
  // the target options are verify's, validated by verify's schema
  const verifyArgs: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!.replace(/^--/, "").split("=")[0]!;
    if (loadOnly.includes(flag)) {
      if (flag !== "allow-remote-load" && !argv[i]!.includes("=")) i++;
      continue;
    }
    verifyArgs.push(argv[i]!);
  }
  const config = parseVerifyConfig(verifyArgs, { ...process.env, AGENT_HARNESS_SUITES: "" });
  const thresholds: Threshold[] = [];
  for (const source of parsed.data.threshold) {
    const t = parseThreshold(source);
    if (typeof t === "string") throw new UsageError(t);
    thresholds.push(t);
  }
  if (config.baseUrl && !LOOPBACK.test(new URL(config.baseUrl).hostname) && !parsed.data.allowRemoteLoad)
    throw new UsageError(
      `refusing to put load on ${new URL(config.baseUrl).host}: not a loopback address (add --allow-remote-load if you own it)`,
    );
  return { config, scenarios: parsed.data.scenario, thresholds };
}

/** A progress line with elapsed and (estimated) remaining time; redrawn in place on a terminal. */
function progress(totalSeconds: number) {
  const started = Date.now();
  const tty = process.stderr.isTTY;
  let timer: NodeJS.Timeout | undefined;
  let label = "";
  const draw = () => {
    const elapsed = (Date.now() - started) / 1000;
    const share = Math.min(1, elapsed / Math.max(1, totalSeconds));
    const width = 24;
    const bar = "#".repeat(Math.round(share * width)).padEnd(width, "-");
    const left = Math.max(0, totalSeconds - elapsed);
    const line = `[${bar}] ${elapsed.toFixed(0)} s elapsed, ~${left.toFixed(0)} s left — ${label}`;
    if (tty) process.stderr.write(`\r\x1b[2K${line}`);
  };
  return {
    start(id: string, estimate: number) {
      label = id;
      if (!tty) process.stderr.write(`… ${id} (about ${estimate.toFixed(0)} s)\n`);
      timer ??= setInterval(draw, 500);
      draw();
    },
    stop() {
      if (timer) clearInterval(timer);
      if (tty) process.stderr.write("\r\x1b[2K");
    },
  };
}

function toCheck(r: ScenarioReport): CheckResult {
  const message =
    r.findings.length > 0
      ? r.findings.map(formatFinding).join("\n")
      : (r.message ?? (r.status === "skipped" ? "skipped" : undefined));
  return {
    id: `load ${r.id}`,
    title: r.title,
    suite: "load",
    file: "src/load/scenarios.ts",
    clauseIds: r.clauses,
    sections: [...new Set(r.clauses.map((id) => CLAUSE_BY_ID.get(id)?.section ?? "?"))],
    status: r.status,
    durationMs: r.durationMs,
    ...(message ? { message } : {}),
  };
}

export async function load(argv: string[]): Promise<number> {
  const parsed = parseOrHelp(() => parseLoadArgs(argv), LOAD_USAGE);
  if (!parsed) return 0;
  const { config, thresholds } = parsed;
  const { runId, reportDir, runDir, seed, run } = newRun(config);
  mkdirSync(runDir, { recursive: true });
  const out = process.stdout;
  out.write(`agent-harness load — run ${runId}\n`);
  // a reference target the harness starts streams at the real budget (PROFILE §5) unless told otherwise
  const { target, stop } = await startTarget(
    { ...config, messageTimeout: config.messageTimeout ?? MESSAGE_TIMING.defaultBudgetSeconds },
    run,
  );
  const abort = interruptible(() => process.stderr.write("\ninterrupted: ending the scenario and deleting what it made…\n"));
  const startedAt = new Date();
  const reports: ScenarioReport[] = [];
  try {
    await assertReachable(target);
    const chosen = SCENARIOS.filter((s) => !parsed.scenarios || parsed.scenarios.includes(s.id));
    const total = chosen.reduce((n, s) => n + (s.unavailable?.(target) ? 0 : s.estimateSeconds(target)), 0);
    out.write(
      `target: ${target.kind} ${target.baseUrl} (W = ${target.windowSeconds} s, budget ${target.messageTimeoutSeconds} s); ${chosen.length} scenario(s), about ${Math.round(total)} s\n`,
    );
    const bar = progress(total);
    try {
      for (const scenario of chosen) {
        if (abort.signal.aborted) break;
        bar.start(scenario.id, scenario.estimateSeconds(target));
        const report = await runScenario(target, scenario, abort.signal);
        reports.push(report);
        bar.stop();
        const mark = { passed: "✓", failed: "✗", error: "!", skipped: "-" }[report.status];
        out.write(
          `${mark} ${scenario.id} ${report.status} (${(report.durationMs / 1000).toFixed(1)} s)${report.message ? ` — ${report.message}` : ""}\n`,
        );
        for (const f of report.findings) out.write(`    ${formatFinding(f)}\n`);
        for (const line of formatLatency(report)) out.write(`    ${line}\n`);
        if (report.generator.saturated) out.write(`    note: ${report.generator.note}\n`);
      }
    } finally {
      bar.stop();
    }
  } finally {
    abort.release();
    await stop();
  }
  const thresholdResults = thresholds.map((t) => evaluateThreshold(t, thresholdInputOf(reports)));
  const loadRun: LoadRun = {
    runId,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    target: {
      kind: target.kind,
      baseUrl: target.baseUrl,
      windowSeconds: target.windowSeconds,
      messageTimeoutSeconds: target.messageTimeoutSeconds,
    },
    scenarios: reports,
    thresholds: thresholdResults,
  };
  const scenarioChecks = reports.map(toCheck);
  // one defect, one finding (issue 7): a response-level violation seen in several scenarios is one
  const findings = collectFindings(scenarioChecks.map((check, i) => ({ check, observations: reports[i]!.observations })));
  const checks = [
    ...scenarioChecks,
    ...thresholdResults.map(
      (t): CheckResult => ({
        id: `threshold ${t.source}`,
        title: `threshold ${t.source}`,
        suite: "load",
        file: "thresholds",
        clauseIds: [],
        sections: [],
        status: t.passed ? "passed" : "failed",
        durationMs: 0,
        message: t.observed,
      }),
    ),
  ];
  const result: RunResult = {
    runId,
    startedAt: loadRun.startedAt,
    finishedAt: loadRun.finishedAt,
    target: { kind: target.kind, baseUrl: target.baseUrl },
    seed,
    options: {
      suites: ["load"],
      ...targetOptions(target, config),
      sections: null,
    },
    checks,
    findings,
  };
  const secrets = Object.values(target.keys).filter((k): k is string => !!k);
  const written = await writeReports(result, reportDir, { secrets });
  writeFileSync(join(written.dir, "load.json"), `${JSON.stringify(loadRun, null, 2)}\n`);
  // the HTML report with the load charts (inline SVG)
  writeFileSync(written.html, renderLoadHtml(result, loadRun, { secrets }));
  for (const t of thresholdResults) out.write(`${t.passed ? "✓" : "✗"} threshold ${t.source}: ${t.observed}\n`);
  const count = (s: string) => checks.filter((c) => c.status === s).length;
  out.write(
    `\n${count("passed")} passed, ${count("failed") + count("error")} failed${count("skipped") ? `, ${count("skipped")} skipped` : ""}\n`,
  );
  out.write(`reports: ${written.dir} (load.json, report.html)\n`);
  if (abort.signal.aborted) return 130;
  if (checks.some((c) => c.status === "error" && !reports.some((r) => r.findings.length))) return 1;
  return checks.some((c) => c.status === "failed" || c.status === "error") ? 1 : 0;
}
