import { CLAUSES, type Clause } from "../contract/clauses.js";
import type { RunPlan } from "../plan/plan.js";
import type { Finding } from "./findings.js";

/**
 * The results model of one `agent-harness verify` run. Every report (JUnit, JSON, HTML,
 * terminal) is written from it, so they cannot disagree.
 *
 * Two kinds of red (STYLE §7): "failed" means the target broke a clause (a ConformanceFailure,
 * JUnit <failure>); "error" means the harness could not judge (bad config, unreachable target:
 * a HarnessError, JUnit <error>); "blocked" means an earlier defect (a finding) kept the check
 * from running: its setup could not be done.
 */
export type CheckStatus = "passed" | "failed" | "error" | "blocked" | "skipped";

export interface Evidence {
  request: { method: string; url: string; headers: Record<string, string>; body?: string };
  response?: { status: number; headers: Record<string, string>; body?: string };
  requestId?: string;
  curl: string;
}

export interface CheckResult {
  id: string;
  title: string;
  suite: string;
  file?: string;
  clauseIds: string[];
  sections: string[];
  status: CheckStatus;
  durationMs: number;
  /** failure: expected vs received; skip: the reason and the flag that enables it */
  message?: string;
  evidence?: Evidence[];
  /** the findings seen in this check (response-level) or made by it (its own failure) */
  findingIds?: string[];
  /** status blocked: the finding that kept it from running */
  blockedBy?: string;
  /** a failure that broke a clause other than the check's own (its finding is made under that clause) */
  clauseAtFault?: string;
}

export interface RunResult {
  runId: string;
  startedAt: string;
  finishedAt: string;
  target: { kind: "embedded" | "container" | "external"; baseUrl: string };
  seed?: number;
  options: Record<string, unknown>;
  checks: CheckResult[];
  /** an external run's request plan and the time it took against the plan's bound (src/plan) */
  plan?: RunPlan;
  /** most important first (see findings.ts) */
  findings?: Finding[];
  /** set when the run was stopped (Ctrl-C) before every check ran */
  interrupted?: { done: number; total: number };
}

export interface Totals {
  passed: number;
  failed: number;
  error: number;
  blocked: number;
  skipped: number;
  total: number;
  findings: number;
  /** wall clock from startedAt to finishedAt; the sum of check durations if those do not parse */
  durationMs: number;
}

/**
 * Coverage of one PROFILE section, counted in clauses (not checks). A clause's status is the
 * worst of the checks citing it: failed > error > passed > skipped (skipped only when every
 * check citing it was skipped).
 */
export interface SectionCoverage {
  section: string;
  /** clauses of the section in the registry */
  clauses: number;
  /** ids of the clauses cited by at least one check, whatever its status */
  checked: string[];
  passed: number;
  failed: number;
  error: number;
  blocked: number;
  skipped: number;
  /** MUST clauses of the section that no check cites */
  uncovered: string[];
}

export interface RunSummary {
  totals: Totals;
  /** section → coverage, in registry order (§1, §2, …) */
  coverage: Record<string, SectionCoverage>;
  /** every MUST clause no check cites, in registry order */
  uncovered: string[];
  /** clause ids cited by checks but absent from the registry (a typo in a check) */
  unknownClauseIds: string[];
}

const STATUS_RANK: Record<CheckStatus, number> = { failed: 4, error: 3, blocked: 2, passed: 1, skipped: 0 };

/** The worst status among `statuses` (failed > error > blocked > passed > skipped); undefined if empty. */
export function worstStatus(statuses: Iterable<CheckStatus>): CheckStatus | undefined {
  let worst: CheckStatus | undefined;
  for (const status of statuses) if (worst === undefined || STATUS_RANK[status] > STATUS_RANK[worst]) worst = status;
  return worst;
}

export function totalsOf(run: RunResult): Totals {
  const totals: Totals = {
    passed: 0,
    failed: 0,
    error: 0,
    blocked: 0,
    skipped: 0,
    total: run.checks.length,
    findings: run.findings?.length ?? 0,
    durationMs: 0,
  };
  for (const check of run.checks) totals[check.status] += 1;
  const wallClock = Date.parse(run.finishedAt) - Date.parse(run.startedAt);
  totals.durationMs =
    Number.isFinite(wallClock) && wallClock >= 0 ? wallClock : run.checks.reduce((sum, c) => sum + c.durationMs, 0);
  return totals;
}

export function summarize(run: RunResult, clauses: readonly Clause[] = CLAUSES): RunSummary {
  const statusesByClause = new Map<string, CheckStatus[]>();
  for (const check of run.checks) {
    for (const id of new Set(check.clauseIds)) {
      const statuses = statusesByClause.get(id) ?? [];
      statuses.push(check.status);
      statusesByClause.set(id, statuses);
    }
  }

  const coverage: Record<string, SectionCoverage> = {};
  const uncovered: string[] = [];
  for (const cl of clauses) {
    let section = coverage[cl.section];
    if (!section) {
      section = {
        section: cl.section,
        clauses: 0,
        checked: [],
        passed: 0,
        failed: 0,
        error: 0,
        blocked: 0,
        skipped: 0,
        uncovered: [],
      };
      coverage[cl.section] = section;
    }
    section.clauses += 1;
    const status = worstStatus(statusesByClause.get(cl.id) ?? []);
    if (status === undefined) {
      if (cl.level === "MUST") {
        section.uncovered.push(cl.id);
        uncovered.push(cl.id);
      }
      continue;
    }
    section.checked.push(cl.id);
    section[status] += 1;
  }

  const known = new Set(clauses.map((cl) => cl.id));
  const unknownClauseIds = [...statusesByClause.keys()].filter((id) => !known.has(id));
  return { totals: totalsOf(run), coverage, uncovered, unknownClauseIds };
}

/**
 * The CLI's last line (STYLE: "N passed, N failed" and ", N skipped" when any were skipped),
 * with the findings first and the blocked and errored checks named apart, so every count on
 * the cards of report.html reads the same here.
 */
export function summaryLine(
  totals: Pick<Totals, "passed" | "failed" | "error" | "skipped"> & Partial<Pick<Totals, "blocked" | "findings">>,
): string {
  const parts = [`${totals.passed} passed`, `${totals.failed} failed`];
  if (totals.error > 0) parts.push(`${totals.error} error${totals.error === 1 ? "" : "s"}`);
  if (totals.blocked) parts.push(`${totals.blocked} blocked`);
  if (totals.skipped > 0) parts.push(`${totals.skipped} skipped`);
  const line = parts.join(", ");
  return totals.findings ? `${totals.findings} finding${totals.findings === 1 ? "" : "s"}; ${line}` : line;
}

/** Failures first: failed (the target broke a clause), then errors (the harness could not judge), in run order. */
export function redChecks(run: RunResult): CheckResult[] {
  return [...run.checks.filter((c) => c.status === "failed"), ...run.checks.filter((c) => c.status === "error")];
}

/** Exit code of a run (STYLE §7): 130 interrupted; 2 a harness error or nothing ran; 1 a finding or failed check; 0. */
export function exitCodeOf(run: RunResult): number {
  if (run.interrupted) return 130;
  const ran = run.checks.some((c) => c.status !== "skipped" && c.suite !== "run");
  if (run.checks.some((c) => c.status === "error") || !ran) return 2;
  if ((run.findings?.length ?? 0) > 0 || run.checks.some((c) => c.status === "failed" || c.status === "blocked")) return 1;
  return 0;
}

/** Checks grouped by suite, suites in order of first appearance, checks in run order. */
export function checksBySuite(run: RunResult): Map<string, CheckResult[]> {
  const bySuite = new Map<string, CheckResult[]>();
  for (const check of run.checks) {
    const list = bySuite.get(check.suite) ?? [];
    list.push(check);
    bySuite.set(check.suite, list);
  }
  return bySuite;
}

/** "850 ms", "12.3 s", "2 min 03 s" */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, "0")} s`;
}
