import { CLAUSE_BY_ID } from "../contract/clauses.js";
import { endpointList, type Finding } from "./findings.js";
import {
  type CheckResult,
  type CheckStatus,
  checksDone,
  formatDuration,
  passedNote,
  type RunResult,
  summarize,
  summaryLine,
  unexplainedChecks,
} from "./model.js";
import { type ReportOptions, redactSecrets, reportableRun, stripAnsi } from "./redact.js";

/**
 * What the CLI prints: a line per finished check as it finishes, then a table by PROFILE
 * section, then the plain last line `N passed, N failed[, N skipped]`.
 */

export interface TerminalOptions extends ReportOptions {
  /** default: colorEnabled(process.stdout, process.env) */
  color?: boolean;
}

/** Where a progress line stands in the run: `12/378 0:34`. */
export interface ProgressPosition {
  done: number;
  total?: number | undefined;
  /** files not collected yet: their checks are not in `total` ("5/12+") */
  more?: boolean;
  elapsedMs: number;
}

function clock(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** `[12/378 0:34]` */
function formatPosition(at: ProgressPosition): string {
  return `[${at.done}${at.total !== undefined ? `/${at.total}${at.more ? "+" : ""}` : ""} ${clock(at.elapsedMs)}]`;
}

/** https://no-color.org: NO_COLOR (non-empty) wins; FORCE_COLOR forces; otherwise only on a TTY that is not "dumb". */
export function colorEnabled(
  stream: { isTTY?: boolean } = process.stdout,
  env: Record<string, string | undefined> = process.env,
): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== "0" && env.FORCE_COLOR !== "false";
  return stream.isTTY === true && env.TERM !== "dumb";
}

const SGR = {
  reset: "\u001b[0m",
  bold: "\u001b[1m",
  dim: "\u001b[2m",
  red: "\u001b[31m",
  green: "\u001b[32m",
  yellow: "\u001b[33m",
};
type Paint = (text: string, ...codes: (keyof typeof SGR)[]) => string;
const painter =
  (on: boolean): Paint =>
  (text, ...codes) =>
    on && codes.length > 0 ? `${codes.map((code) => SGR[code]).join("")}${text}${SGR.reset}` : text;

const SYMBOL: Record<CheckStatus, string> = {
  passed: "✓",
  failed: "✗",
  error: "!",
  inconclusive: "?",
  blocked: "⊘",
  skipped: "○",
};
const SYMBOL_COLOR: Record<CheckStatus, keyof typeof SGR> = {
  passed: "green",
  failed: "red",
  error: "yellow",
  inconclusive: "yellow",
  blocked: "yellow",
  skipped: "dim",
};

/** Uncovered clauses named in the summary; report.html names them all. */
const UNCOVERED_LISTED = 12;
/** Longest message shown on a progress line; the reports carry the whole message. */
const MESSAGE_CHARS = 160;

/** Text on one terminal line: no colour codes, tabs or line breaks of its own. */
const oneLine = (text: string) => stripAnsi(text).replace(/[\t\r\n]+/g, " ");

/**
 * `✗ limits.429  An empty bucket answers 429  38 ms  — expected 429, received 200`: one line
 * per finished check; failed, errored and skipped ones add the first line of their message.
 */
export function formatProgress(
  result: CheckResult,
  options: TerminalOptions & { at?: ProgressPosition; repeats?: string } = {},
): string {
  const paint = painter(options.color ?? colorEnabled());
  const secrets = options.secrets ?? [];
  // Text from a response must neither leak a key nor drive the terminal (an ESC would).
  const clean = (text: string) => redactSecrets(oneLine(text), secrets).replace(/[^\u0020-\u007E\u00A0-\u{10FFFF}]/gu, "\uFFFD");
  const clauses = result.clauseIds.length > 0 ? result.clauseIds.join(",") : result.suite;
  let line = [
    ...(options.at ? [paint(formatPosition(options.at), "dim")] : []),
    // a repeat is no new red mark: the defect was shown once already
    options.repeats ? paint("↳", "dim") : paint(SYMBOL[result.status], SYMBOL_COLOR[result.status], "bold"),
    paint(clean(clauses), "dim"),
    clean(result.title),
    paint(formatDuration(result.durationMs), "dim"),
  ].join("  ");
  const headline =
    result.status === "blocked" && result.blockedBy
      ? `blocked by ${result.blockedBy}`
      : options.repeats
        ? `the same defect as the failure above on ${options.repeats}`
        : "";
  const message = headline || clean((result.message ?? "").split("\n", 1)[0]?.trim() ?? "");
  const short = (text: string) => (text.length > MESSAGE_CHARS ? `${text.slice(0, MESSAGE_CHARS - 1)}…` : text);
  if (result.status !== "passed" && message !== "") {
    line += `  — ${paint(short(message), options.repeats ? "dim" : SYMBOL_COLOR[result.status])}`;
  } else if (passedNote(result)) {
    // a pass that could not judge part of what it saw says so on its own line, not only in the reports
    line += `  — ${paint(`note: ${short(clean(passedNote(result) ?? ""))}`, "yellow")}`;
  }
  return line;
}

/**
 * One defect is one red line: the first failed check on a clause is shown red; a later one on
 * the same clause (the same defect seen again) is shown dim, naming the clause. The findings at
 * the end say how many checks each defect failed.
 */
export class ProgressFailures {
  private readonly shown = new Set<string>();

  /** The clause of an earlier red line this failure repeats; undefined for a first failure or any other status. */
  repeats(check: CheckResult): string | undefined {
    if (check.status !== "failed") return undefined;
    const clause = check.clauseAtFault ?? check.clauseIds[0] ?? check.suite;
    if (this.shown.has(clause)) return clause;
    this.shown.add(clause);
    return undefined;
  }
}

function table(rows: string[][], rightAligned: ReadonlySet<number>): string[] {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => [...(row[column] ?? "")].length))) ?? [];
  return rows.map((row) =>
    row
      .map((cell, column) => {
        const width = widths[column] ?? 0;
        const pad = " ".repeat(width - [...cell].length);
        return rightAligned.has(column) ? pad + cell : cell + pad;
      })
      .join("  ")
      .trimEnd(),
  );
}

/**
 * The end of a run: failures again (the progress lines may have scrolled away), a table by
 * PROFILE section, the uncovered MUST clauses, and last the plain summary line, never coloured.
 */
export function formatSummary(runInput: RunResult, options: TerminalOptions = {}): string {
  const run = reportableRun(runInput, options);
  const color = options.color ?? colorEnabled();
  const paint = painter(color);
  const summary = summarize(run);
  const lines: string[] = [];

  const findings = run.findings ?? [];
  if (findings.length > 0) {
    lines.push(paint(`Findings (${findings.length}):`, "bold"));
    for (const finding of findings) lines.push(...formatFinding(finding, { ...options, color }).map((l) => `  ${l}`));
    lines.push("");
  }
  // failed checks no finding names (a run recorded without findings), then harness errors
  const red = unexplainedChecks(run);
  if (red.length > 0) {
    lines.push(paint(`Failures (${red.length}):`, "bold"));
    for (const check of red) lines.push(`  ${formatProgress(check, { ...options, color })}`);
    lines.push("");
  }
  // passes that could not judge part of what they saw: under the red, before the table
  const noted = run.checks.filter((check) => passedNote(check) !== undefined);
  if (noted.length > 0) {
    lines.push(paint(`Notes (${noted.length}): passed, with part of what they saw not judged`, "bold"));
    for (const check of noted) lines.push(`  ${oneLine(check.title)}: ${oneLine(passedNote(check) ?? "")}`);
    lines.push("");
  }
  if (run.interrupted) lines.push(paint(`interrupted after ${checksDone(run.interrupted)} checks`, "yellow", "bold"), "");

  const sections = Object.values(summary.coverage);
  const sum = (pick: (s: (typeof sections)[number]) => number) => String(sections.reduce((total, s) => total + pick(s), 0));
  const rows = [
    ["Section", "Clauses", "Covered", "Passed", "Failed", "Errors", "Blocked", "Skipped", "Uncovered MUST"],
    ...sections.map((s) =>
      [
        s.section,
        s.clauses,
        s.checked.length,
        s.passed,
        s.failed,
        s.error + s.inconclusive,
        s.blocked,
        s.skipped,
        s.uncovered.length,
      ].map(String),
    ),
    [
      "all",
      sum((s) => s.clauses),
      sum((s) => s.checked.length),
      sum((s) => s.passed),
      sum((s) => s.failed),
      sum((s) => s.error + s.inconclusive),
      sum((s) => s.blocked),
      sum((s) => s.skipped),
      sum((s) => s.uncovered.length),
    ],
  ];
  const [head, ...body] = table(rows, new Set([1, 2, 3, 4, 5, 6, 7, 8]));
  lines.push(paint(head ?? "", "bold"), ...body.slice(0, -1), paint(body.at(-1) ?? "", "bold"));

  if (summary.uncovered.length > 0) {
    const named = summary.uncovered.slice(0, UNCOVERED_LISTED).map((id) => `${id} (${CLAUSE_BY_ID.get(id)?.section ?? "?"})`);
    const more = summary.uncovered.length - named.length;
    if (more > 0) named.push(`and ${more} more (see report.html)`);
    lines.push("", `Uncovered MUST clauses (${summary.uncovered.length}): ${named.join(", ")}`);
  }
  if (summary.unknownClauseIds.length > 0) {
    lines.push("", paint(`Clause ids not in the registry: ${summary.unknownClauseIds.join(", ")}`, "yellow"));
  }
  lines.push("", `${summary.totals.total} checks in ${formatDuration(summary.totals.durationMs)} (run ${run.runId})`);
  lines.push(summaryLine(summary.totals));
  return lines.join("\n");
}

/**
 * A finding as the terminal shows it:
 * `F1 ✗ PROFILE §2 envelope.list: expected …; received …`, then where it was seen, how often,
 * what it blocked, the first request id and the replay.
 */
export function formatFinding(finding: Finding, options: TerminalOptions = {}): string[] {
  const paint = painter(options.color ?? colorEnabled());
  const clean = (text: string) => redactSecrets(oneLine(text), options.secrets ?? []);
  const seen =
    finding.kind === "response"
      ? `seen ${finding.occurrences}× in ${finding.seenIn.length} check${finding.seenIn.length === 1 ? "" : "s"}`
      : `check: ${finding.check}`;
  const lines = [
    `${paint(finding.id, "bold")} ${paint("✗", "red", "bold")} ${clean(finding.message)}`,
    `   ${paint(`${endpointList(finding.endpoints)} · ${seen}${finding.blocked.length ? ` · blocked ${finding.blocked.length}` : ""}`, "dim")}`,
  ];
  const tail = [
    ...(finding.firstRequestId ? [`first request ${finding.firstRequestId}`] : []),
    ...(finding.replay ? [`replay: sh ${finding.replay}`] : []),
  ];
  if (tail.length) lines.push(`   ${paint(clean(tail.join(" · ")), "dim")}`);
  return lines;
}
