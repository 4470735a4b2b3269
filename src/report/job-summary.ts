import { CLAUSE_BY_ID } from "../contract/clauses.js";
import { endpointList, type Finding } from "./findings.js";
import {
  type CheckResult,
  checksDone,
  type ExitCode,
  formatDuration,
  passedNote,
  type RunResult,
  type RunSummary,
} from "./model.js";
import type { ReportOptions } from "./redact.js";
import { reportView } from "./view.js";

/**
 * The job summary of a CI run: GitHub-flavoured Markdown that GitHub Actions shows on the job's
 * page (appended to $GITHUB_STEP_SUMMARY). The verdict first, then one row per finding (clause,
 * endpoints, how often, replay), the red checks no finding explains, coverage by PROFILE
 * section; long lists fold into <details>. The whole record stays in the report folder.
 */

export interface JobSummaryOptions extends ReportOptions {
  /** the report folder of the run as the reader finds it (relative to the job's working directory) */
  reportDir?: string;
}

/** The verdict a CI step shows, from the exit code the step ends with (STYLE §7). */
const VERDICT: Record<ExitCode, string> = {
  0: "✅ passed",
  1: "❌ failed",
  2: "⚠️ harness error",
  130: "⏹️ interrupted",
};

/** Rows of a long list shown open; the rest fold into a <details>. */
const SHOWN = 10;
/** Rows a folded list names at most: a step summary is capped at 1 MiB, report.html names them all. */
const LISTED = 200;

/**
 * Control characters but whitespace, which a Markdown line drops (GitHub would show a NUL or an
 * ESC as a box): dropped before the keys are scrubbed too (renderJobSummary), so that a key split
 * by one is never made whole here.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is matched
const CONTROL_CHARS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;
const withoutControlChars = (text: string) => text.replace(CONTROL_CHARS, "");

/** Text in a table cell or a list item: one line, no HTML, no Markdown syntax, no cell break. */
export function markdownText(text: string): string {
  return withoutControlChars(text)
    .replace(/\s+/g, " ")
    .trim()
    .replace(/[&<>]/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[ch] ?? ch)
    .replace(/[\\`*_[\]|~]/g, "\\$&");
}

/**
 * A code span. In a table cell a pipe is escaped even inside one, or GitHub ends the cell there;
 * outside a table the backslash would show, so the pipe stays.
 */
function code(text: string, where: "cell" | "line" = "cell"): string {
  const line = withoutControlChars(text).replace(/\s+/g, " ").trim();
  if (line.includes("`")) return markdownText(line);
  return `\`${where === "cell" ? line.replace(/\|/g, "\\|") : line}\``;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** `auth.required` §6 for each clause. */
const clauseCell = (ids: readonly string[]) =>
  ids.map((id) => `${code(id)} ${CLAUSE_BY_ID.get(id)?.section ?? ""}`.trim()).join(", ") || "—";

/** The finding's headline without the `PROFILE §6 auth.required: ` its clause column already says. */
function findingText(finding: Finding): string {
  const clause = finding.clauseIds[0];
  const prefix = clause ? `PROFILE ${CLAUSE_BY_ID.get(clause)?.section} ${clause}: ` : undefined;
  const headline = finding.message.split("\n", 1)[0] ?? "";
  return prefix && headline.startsWith(prefix) ? headline.slice(prefix.length) : headline;
}

function findingRow(finding: Finding): string {
  const seen =
    finding.kind === "response"
      ? `${finding.occurrences}× in ${plural(finding.seenIn.length, "check")}`
      : plural(finding.occurrences, "failed check");
  const blocked = finding.blocked.length ? `, blocked ${finding.blocked.length}` : "";
  const replay = finding.replay ? code(`sh ${finding.replay}`) : "—";
  const cells = [
    `**${finding.id}**`,
    clauseCell(finding.clauseIds),
    markdownText(findingText(finding)),
    markdownText(endpointList(finding.endpoints)),
    seen + blocked,
    replay,
  ];
  return `| ${cells.join(" | ")} |`;
}

/** A table whose rows past the first SHOWN fold into a <details> (the header repeated there). */
function foldedTable(header: readonly [string, string], rows: readonly string[], what: string): string[] {
  const lines = [...header, ...rows.slice(0, SHOWN)];
  const rest = rows.slice(SHOWN, LISTED);
  if (rest.length === 0) return lines;
  const unnamed = rows.length - SHOWN - rest.length;
  return [
    ...lines,
    "",
    `<details><summary>${rows.length - SHOWN} more ${what}</summary>`,
    "",
    ...header,
    ...rest,
    ...(unnamed > 0 ? ["", `and ${unnamed} more in report.html`] : []),
    "",
    "</details>",
  ];
}

function findingsSection(findings: readonly Finding[]): string[] {
  if (findings.length === 0) return [];
  const head = ["| | Clause | Finding | Endpoints | Seen | Replay |", "|---|---|---|---|---|---|"] as const;
  return [`#### Findings (${findings.length})`, "", ...foldedTable(head, findings.map(findingRow), "findings"), ""];
}

/** Harness errors, and failed checks of a run recorded without findings: what no finding explains. */
function unexplainedSection(checks: readonly CheckResult[]): string[] {
  if (checks.length === 0) return [];
  const rows = checks.map((check) => {
    const kind = check.status === "failed" ? "failed" : check.status === "error" ? "harness error" : "inconclusive";
    const message = (check.message ?? "").split("\n", 1)[0] ?? "";
    return `| ${kind} | ${clauseCell(check.clauseIds)} | ${markdownText(check.title)} | ${markdownText(message) || "—"} |`;
  });
  const head = ["| | Clause | Check | Message |", "|---|---|---|---|"] as const;
  return [`#### Not explained by a finding (${checks.length})`, "", ...foldedTable(head, rows, "checks"), ""];
}

/** Checks that passed with part of what they saw not judged, and why: a pass with a caveat, never a silent one. */
function notesSection(checks: readonly CheckResult[]): string[] {
  const noted = checks.filter((check) => passedNote(check) !== undefined);
  if (noted.length === 0) return [];
  const rows = noted.map(
    (check) => `| ${clauseCell(check.clauseIds)} | ${markdownText(check.title)} | ${markdownText(passedNote(check) ?? "")} |`,
  );
  const head = ["| Clause | Check | Not judged |", "|---|---|---|"] as const;
  return [`#### Passed with a note (${noted.length})`, "", ...foldedTable(head, rows, "checks"), ""];
}

function coverageSection(summary: RunSummary): string[] {
  const sections = Object.values(summary.coverage);
  const columns = ["passed", "failed", "error", "blocked", "skipped"] as const;
  const row = (name: string, counts: number[]) => `| ${name} | ${counts.join(" | ")} |`;
  const countsOf = (s: (typeof sections)[number]) => [
    s.clauses,
    s.checked.length,
    // Errors counts the inconclusive clauses too: neither was judged
    ...columns.map((c) => (c === "error" ? s.error + s.inconclusive : s[c])),
    s.uncovered.length,
  ];
  const totals = sections.map(countsOf).reduce((sum, counts) => sum.map((n, i) => n + (counts[i] ?? 0)));
  const named = summary.uncovered.slice(0, LISTED).map((id) => `${code(id)} ${CLAUSE_BY_ID.get(id)?.section ?? ""}`.trim());
  const more = summary.uncovered.length - named.length;
  return [
    "#### Coverage by PROFILE section",
    "",
    "Counted in clauses: a clause takes the worst status of the checks citing it.",
    "",
    "| Section | Clauses | Covered | Passed | Failed | Errors | Blocked | Skipped | Uncovered MUST |",
    "|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ...sections.map((s) => row(s.section, countsOf(s))),
    row("**all**", totals ?? []),
    ...(summary.uncovered.length
      ? [
          "",
          `<details><summary>${plural(summary.uncovered.length, "MUST clause")} no check of this run cites</summary>`,
          "",
          `${named.join(", ")}${more > 0 ? `, and ${more} more` : ""}`,
          "",
          "</details>",
        ]
      : []),
    ...(summary.unknownClauseIds.length
      ? ["", `Clause ids not in the registry: ${summary.unknownClauseIds.map((id) => code(id)).join(", ")}`]
      : []),
    "",
  ];
}

/** Markdown for $GITHUB_STEP_SUMMARY, written from the run as every other report is; no key in it. */
export function renderJobSummary(runInput: RunResult, options: JobSummaryOptions = {}): string {
  const view = reportView(runInput, options, withoutControlChars);
  const { run, summary, exitCode } = view;
  const { totals } = summary;
  const command = run.options.scenarios ? "load" : "verify";
  const verdict = view.inconclusive
    ? `⚠️ inconclusive (${view.inconclusiveCause})`
    : view.nothingRan
      ? "⚠️ nothing ran"
      : VERDICT[exitCode];
  const interrupted = run.interrupted ? ` after ${checksDone(run.interrupted)} checks` : "";
  const facts = [
    `${plural(totals.total, "check")} in ${formatDuration(totals.durationMs)}`,
    `${run.target.kind} ${code(run.target.baseUrl, "line")}`,
    `run ${code(run.runId, "line")}`,
    ...(run.seed === undefined ? [] : [`seed ${run.seed}`]),
  ];
  const optionRows = view.options.map(([name, value]) => `| ${markdownText(name)} | ${markdownText(value)} |`);
  return [
    `### agent-harness ${command}: ${verdict}${interrupted}`,
    "",
    `**${markdownText(view.line)}** · ${facts.join(" · ")}`,
    "",
    ...findingsSection(run.findings ?? []),
    ...unexplainedSection(view.unexplained),
    ...notesSection(run.checks),
    ...coverageSection(summary),
    "<details><summary>Options</summary>",
    "",
    "| Option | Value |",
    "|---|---|",
    ...optionRows,
    "",
    "</details>",
    "",
    ...(options.reportDir
      ? [
          `Reports in ${code(options.reportDir, "line")}: report.html, junit.xml, results.json${(run.findings ?? []).some((f) => f.replay) ? " and the replay scripts" : ""}.`,
          "",
        ]
      : []),
  ].join("\n");
}
