import type { ServiceClock } from "../client/service-clock.js";
import { CLAUSES, type Clause, chosenIn } from "../contract/clauses.js";
import { roleLabel } from "../target/key-roles.js";
import type { RunPlan } from "./plan-types.js";
import type { PropertySummary } from "./property.js";
import type { RefusalWaits } from "./refusals.js";
import { inconclusiveCause } from "./verdict.js";

/**
 * The results model of one `agent-harness verify` run. Every report (JUnit, JSON, HTML,
 * terminal) is written from it, so they cannot disagree.
 *
 * Two kinds of red (STYLE §7): "failed" means the target broke a clause (a ConformanceFailure,
 * JUnit <failure>); "error" means the harness could not judge (bad config, unreachable target:
 * a HarnessError, JUnit <error>); "blocked" means an earlier defect (a finding) kept the check
 * from running: its setup could not be done; "inconclusive" means another client's activity in
 * the account kept it from judging (an Inconclusive, naming what was seen: never a finding, never
 * a pass; JUnit <skipped> with that reason, and exit 2 when no finding was made).
 */
export type CheckStatus = "passed" | "failed" | "error" | "inconclusive" | "blocked" | "skipped";

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
  /** the line of the test's definition in `file`, when the runner knew it */
  line?: number;
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
  /** the clause its failure named — its own or a narrower one: its finding is made under that clause */
  clauseAtFault?: string;
  /**
   * what a check that passed could not judge of what it saw, and why (a judgement that took none of
   * its answers): said beside the pass, never passed over
   */
  note?: string;
}

export interface RunResult {
  runId: string;
  startedAt: string;
  finishedAt: string;
  target: { kind: "embedded" | "container" | "external"; baseUrl: string };
  seed?: number;
  options: RunOptions;
  checks: CheckResult[];
  /** an external run's request plan and the time it took against the plan's bound (src/plan) */
  plan?: RunPlan;
  /**
   * the service's clock minus the runner's, as estimated from its Date header before the first
   * check (source `runner`: it sent none); its times (Reset, createdAt, updatedAt) were judged on it
   */
  serviceClock?: ServiceClock;
  /** most important first (see findings.ts) */
  findings?: Finding[];
  /** what the property-based suites generated and covered, when they ran */
  property?: PropertySummary;
  /** set when the run was stopped (Ctrl-C) before every check ran */
  /** `filesNotReached`: test files the run had not collected yet, whose checks `total` leaves out */
  interrupted?: { done: number; total: number; filesNotReached?: number };
  /** 429s the pacing did not expect, proving no breach: waited out for Retry-After and sent again (src/report/refusals.ts) */
  refusalWaits?: RefusalWaits;
}

/**
 * What the person asked for: the flags they typed or their defaults, one short value each.
 * Keys are named by role and counted, never shown: `{ main: 3, readOnly: 1 }`.
 */
export interface RunOptions {
  /** the suites run (verify) or the scenarios (load) */
  suites?: string[];
  scenarios?: string[];
  profile?: string;
  /** only the checks citing these PROFILE sections */
  sections?: string[] | null;
  windowSeconds: number;
  messageTimeoutSeconds: number;
  /** the main account's tier per window, when known */
  tierLimit: number | null;
  /** the target honours the PROFILE §10 mock models */
  referenceFaults: boolean;
  idField: string;
  /** reference faults injected into a server the harness started */
  faults: string[];
  /** how many keys of each role the run was given (a role absent: none) */
  keys: Record<string, number>;
  /** load thresholds as typed */
  thresholds?: string[];
}

/** The options as a person reads them: one short [name, value] each, never a key. */
export function describeOptions(options: RunOptions): [string, string][] {
  const seconds = (s: number) => `${s} s`;
  // a key role as a person reads it (`readOnly` → `read-only`), from the key-role table
  const keys = Object.entries(options.keys)
    .filter(([, count]) => count > 0)
    .map(([role, count]) => (count > 1 ? `${roleLabel(role)} ×${count}` : roleLabel(role)))
    .join(", ");
  return [
    ...(options.suites ? [["suites", options.suites.join(", ")] satisfies [string, string]] : []),
    ...(options.scenarios ? [["scenarios", options.scenarios.join(", ")] satisfies [string, string]] : []),
    ...(options.profile ? [["profile", options.profile] satisfies [string, string]] : []),
    ...(options.sections?.length ? [["sections", options.sections.join(" ")] satisfies [string, string]] : []),
    ["window W", seconds(options.windowSeconds)],
    ["message budget", seconds(options.messageTimeoutSeconds)],
    ["tier", options.tierLimit === null ? "not given" : `${options.tierLimit} per window`],
    ["keys", keys || "none"],
    ["mock models (§10)", options.referenceFaults ? "yes" : "no"],
    ...(options.idField === "id" ? [] : [["id field", options.idField] satisfies [string, string]]),
    ...(options.faults.length ? [["injected faults", options.faults.join(", ")] satisfies [string, string]] : []),
    ...(options.thresholds?.length ? [["thresholds", options.thresholds.join(", ")] satisfies [string, string]] : []),
  ];
}

export interface Totals {
  passed: number;
  /** failed checks no finding explains (a finding lists the checks that showed it) */
  failed: number;
  /** failed checks counted under a finding: one defect is one red item, however many checks saw it */
  underFindings: number;
  error: number;
  inconclusive: number;
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
interface SectionCoverage {
  section: string;
  /** clauses of the section in the registry */
  clauses: number;
  /** ids of the clauses cited by at least one check, whatever its status */
  checked: string[];
  passed: number;
  failed: number;
  error: number;
  inconclusive: number;
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

const STATUS_RANK: Record<CheckStatus, number> = { failed: 5, error: 4, inconclusive: 3, blocked: 2, passed: 1, skipped: 0 };

/** The worst status among `statuses` (failed > error > inconclusive > blocked > passed > skipped); undefined if empty. */
export function worstStatus(statuses: Iterable<CheckStatus>): CheckStatus | undefined {
  let worst: CheckStatus | undefined;
  for (const status of statuses) if (worst === undefined || STATUS_RANK[status] > STATUS_RANK[worst]) worst = status;
  return worst;
}

export function totalsOf(run: RunResult): Totals {
  const totals: Totals = {
    passed: 0,
    failed: 0,
    underFindings: 0,
    error: 0,
    inconclusive: 0,
    blocked: 0,
    skipped: 0,
    total: run.checks.length,
    findings: run.findings?.length ?? 0,
    durationMs: 0,
  };
  for (const check of run.checks) {
    if (isUnderFinding(check)) totals.underFindings += 1;
    else totals[check.status] += 1;
  }
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
  // a run of some sections or clauses (--sections) covers those: the others are not its to cover
  const selection = run.options.sections;
  for (const cl of clauses) {
    if (selection?.length && !chosenIn(selection, cl)) continue;
    let section = coverage[cl.section];
    if (!section) {
      section = {
        section: cl.section,
        clauses: 0,
        checked: [],
        passed: 0,
        failed: 0,
        error: 0,
        inconclusive: 0,
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
  totals: Pick<Totals, "passed" | "failed" | "error" | "skipped"> &
    Partial<Pick<Totals, "blocked" | "inconclusive" | "findings" | "underFindings">>,
): string {
  const parts = [`${totals.passed} passed`, `${totals.failed} failed`];
  if (totals.error > 0) parts.push(`${totals.error} error${totals.error === 1 ? "" : "s"}`);
  if (totals.inconclusive) parts.push(`${totals.inconclusive} inconclusive`);
  if (totals.blocked) parts.push(`${totals.blocked} blocked`);
  if (totals.skipped > 0) parts.push(`${totals.skipped} skipped`);
  const line = parts.join(", ");
  if (!totals.findings) return line;
  const under = totals.underFindings
    ? ` (${totals.underFindings} failed check${totals.underFindings === 1 ? "" : "s"} under ${totals.findings === 1 ? "it" : "them"})`
    : "";
  return `${totals.findings} finding${totals.findings === 1 ? "" : "s"}${under}; ${line}`;
}

/** The note of a check that passed with part of what it saw not judged (CheckResult.note), or undefined. */
export function passedNote(check: CheckResult): string | undefined {
  return check.status === "passed" ? check.note || undefined : undefined;
}

/** A failed check a finding explains: the finding is the red item, the check one of those that showed it. */
export function isUnderFinding(check: CheckResult): boolean {
  return check.status === "failed" && (check.findingIds?.length ?? 0) > 0;
}

/**
 * The last line of a run that is no verdict on the service (exit 2), where a CI log shows it:
 * its inconclusive checks, or that nothing ran; undefined for a verdict.
 */
export function noVerdictLine(run: RunResult): string | undefined {
  return inconclusiveLine(run) ?? nothingRanLine(run);
}

/**
 * The run's closing line when inconclusive checks, and no finding, decide its exit 2: how many
 * and what the first one saw. Undefined when none was inconclusive or a finding decides.
 */
export function inconclusiveLine(run: RunResult): string | undefined {
  if (run.interrupted || (run.findings?.length ?? 0) > 0 || run.checks.some((c) => c.status === "failed")) return undefined;
  const checks = run.checks.filter((c) => c.status === "inconclusive");
  if (checks.length === 0) return undefined;
  const saw = (checks[0]?.message ?? "").split("\n")[0];
  const cause = inconclusiveCause(checks.map((c) => c.message));
  return `inconclusive: ${checks.length} check${checks.length === 1 ? "" : "s"} could not be judged, ${cause} (${saw}); no finding; exit 2`;
}

/**
 * The run's closing line when it ran no check of its selection (exit 2, nothing judged): the run's
 * own row that broke (its bound, its sweep), or every check it selected skipped (their reasons:
 * the flags or keys that enable them), or its suites have no check in the sections (or clause
 * ids) or profile asked for. Undefined when one ran.
 */
export function nothingRanLine(run: RunResult): string | undefined {
  if (run.interrupted || run.checks.some((c) => c.status !== "skipped" && c.suite !== "run")) return undefined;
  // the run's own rows first: a run stopped at its bound, a sweep that failed
  const broke = run.checks.find((c) => c.suite === "run" && (c.status === "error" || c.status === "failed"));
  if (broke) return `nothing ran: ${broke.title}: ${(broke.message ?? "").split("\n")[0]}; no verdict; exit 2`;
  const skipped = run.checks.filter((c) => c.status === "skipped" && c.suite !== "run");
  if (skipped.length) {
    const reasons = new Map<string, number>();
    for (const c of skipped) {
      const reason = (c.message ?? "skipped").split("\n")[0]!;
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    }
    const why = [...reasons].map(([reason, n]) => (reasons.size > 1 ? `${n}: ${reason}` : reason)).join("; ");
    return `nothing ran: the ${skipped.length} check${skipped.length === 1 ? "" : "s"} selected ${skipped.length === 1 ? "was" : "were all"} skipped (${why}); no verdict; exit 2`;
  }
  const { suites = [], scenarios = [], sections, profile } = run.options;
  const asked = [
    ...(sections?.length ? [`--sections ${sections.join(",")}`] : []),
    ...(profile && profile !== "full" ? [`--profile ${profile}`] : []),
  ];
  return `nothing ran: ${[...suites, ...scenarios].join(", ") || "the selection"} ${asked.length ? `has no check for ${asked.join(" and ")}` : "selected no check"}; no verdict; exit 2`;
}

/**
 * Failures first: failed (the target broke a clause), then errors (the harness could not judge),
 * then the inconclusive (another client kept it from judging), in run order.
 */
export function redChecks(run: RunResult): CheckResult[] {
  return (["failed", "error", "inconclusive"] as const).flatMap((status) => run.checks.filter((c) => c.status === status));
}

/**
 * The red checks no finding explains, as every report lists them apart: failed checks under no
 * finding, and every harness error (an error is never explained by a finding it happened to see).
 */
export function unexplainedChecks(run: RunResult): CheckResult[] {
  return redChecks(run).filter((c) => c.status !== "failed" || !isUnderFinding(c));
}

/** "12 of 40 checks"; "12 of 40+ checks" when files the run never reached had checks not counted. */
export const checksDone = (interrupted: NonNullable<RunResult["interrupted"]>): string =>
  `${interrupted.done} of ${interrupted.total}${interrupted.filesNotReached ? "+" : ""}`;

/**
 * Exit code of a run (STYLE §7): 130 interrupted; 2 nothing ran; 1 a finding or failed check,
 * even beside a check that errored (what the target broke is the verdict; the errors are still
 * listed); 2 a harness error, or an inconclusive check, and no finding; 0.
 */
export type ExitCode = 0 | 1 | 2 | 130;

export function exitCodeOf(run: RunResult): ExitCode {
  if (run.interrupted) return 130;
  if (!run.checks.some((c) => c.status !== "skipped" && c.suite !== "run")) return 2;
  if ((run.findings?.length ?? 0) > 0 || run.checks.some((c) => c.status === "failed" || c.status === "blocked")) return 1;
  if (run.checks.some((c) => c.status === "error" || c.status === "inconclusive")) return 2;
  return 0;
}

/** "850 ms", "12.3 s", "2 min 03 s" */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, "0")} s`;
}

/** One defect as a report shows it (STYLE §10): made by src/report/findings.ts. */
export interface Finding {
  /** F1, F2, … in order of importance */
  id: string;
  /** a response-level check (seen on responses) or a check's own assertion */
  kind: "response" | "check";
  /** the response-level check id, or the check (test) id */
  check: string;
  clauseIds: string[];
  sections: string[];
  endpoints: string[];
  /** the headline, in the words of the clause: expected and received */
  message: string;
  occurrences: number;
  /** the checks it was seen in (response) or the check that failed (check) */
  seenIn: string[];
  /** checks it kept from running */
  blocked: string[];
  firstRequestId?: string;
  evidence: Evidence[];
  /** the replay script's file name in the report folder */
  replay?: string;
  /** the steps a replay runs: the setup create (if any), then the failing call */
  setup?: { evidence: Evidence; agentId: string };
}
