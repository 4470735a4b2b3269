import { CLAUSES, type Clause } from "../contract/clauses.js";
import type { RunPlan } from "../plan/plan.js";

/**
 * The results model of one `agent-harness verify` run. Every report (JUnit, JSON, HTML,
 * terminal) is written from it, so they cannot disagree.
 *
 * Two kinds of red (STYLE §7): "failed" means the target broke a clause (a ConformanceFailure,
 * JUnit <failure>); "error" means the harness could not judge (bad config, unreachable target:
 * a HarnessError, JUnit <error>).
 */
export type CheckStatus = "passed" | "failed" | "error" | "skipped";

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
}

export interface Totals {
  passed: number;
  failed: number;
  error: number;
  skipped: number;
  total: number;
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

const STATUS_RANK: Record<CheckStatus, number> = { failed: 3, error: 2, passed: 1, skipped: 0 };

/** The worst status among `statuses` (failed > error > passed > skipped); undefined if empty. */
export function worstStatus(statuses: Iterable<CheckStatus>): CheckStatus | undefined {
  let worst: CheckStatus | undefined;
  for (const status of statuses) if (worst === undefined || STATUS_RANK[status] > STATUS_RANK[worst]) worst = status;
  return worst;
}

export function totalsOf(run: RunResult): Totals {
  const totals: Totals = { passed: 0, failed: 0, error: 0, skipped: 0, total: run.checks.length, durationMs: 0 };
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
      section = { section: cl.section, clauses: 0, checked: [], passed: 0, failed: 0, error: 0, skipped: 0, uncovered: [] };
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
 * The CLI's last line (STYLE: "N passed, N failed" and ", N skipped" when any were skipped).
 * Harness errors count as failed here: either way the run did not show conformance.
 */
export function summaryLine(totals: Pick<Totals, "passed" | "failed" | "error" | "skipped">): string {
  const line = `${totals.passed} passed, ${totals.failed + totals.error} failed`;
  return totals.skipped > 0 ? `${line}, ${totals.skipped} skipped` : line;
}

/** Failures first: failed (the target broke a clause), then errors (the harness could not judge), in run order. */
export function redChecks(run: RunResult): CheckResult[] {
  return [...run.checks.filter((c) => c.status === "failed"), ...run.checks.filter((c) => c.status === "error")];
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
