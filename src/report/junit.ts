import type { Finding } from "./findings.js";
import {
  type CheckResult,
  checksDone,
  type Evidence,
  isUnderFinding,
  noVerdictLine,
  passedNote,
  type RunResult,
  summarize,
} from "./model.js";
import { type ReportOptions, reportableRun } from "./redact.js";
import { inconclusiveCause } from "./verdict.js";

/**
 * JUnit XML, the dialect CI servers read (Jenkins, GitLab, GitHub annotators): first a
 * <testsuite name="findings"> with one failed <testcase> per finding (so CI annotations lead with
 * the defects, one each), then a <testsuite> per PROFILE section with a <testcase> per check,
 * classname the section, name the check's title. A ConformanceFailure is a <failure>, a
 * HarnessError an <error> (STYLE §7); a blocked check, and a failed check a finding explains, is
 * <skipped> naming the finding: one defect is one failed test case, however many checks showed it.
 * Each <testcase> names the file and line of its check (a finding's: the check that made it), so
 * annotation reporters place it.
 */

/** Characters XML 1.0 forbids anywhere, even escaped: C0 controls but tab/LF/CR, lone surrogates, U+FFFE/U+FFFF. */
const ILLEGAL_XML_CHARS = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

export function stripIllegalXmlChars(text: string): string {
  return text.replace(ILLEGAL_XML_CHARS, "");
}

const XML_ENTITIES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&apos;",
  "\t": "&#9;",
  "\n": "&#10;",
  "\r": "&#13;",
};

export function escapeXmlText(text: string): string {
  return stripIllegalXmlChars(text).replace(/[&<>]/g, (ch) => XML_ENTITIES[ch] ?? ch);
}

/** Also tab/LF/CR as references: a parser would otherwise normalize them to spaces inside an attribute. */
export function escapeXmlAttr(text: string): string {
  return stripIllegalXmlChars(text).replace(/[&<>"'\t\n\r]/g, (ch) => XML_ENTITIES[ch] ?? ch);
}

const attrs = (pairs: Record<string, string | number | undefined>): string =>
  Object.entries(pairs)
    .filter((entry): entry is [string, string | number] => entry[1] !== undefined)
    .map(([name, value]) => ` ${name}="${escapeXmlAttr(String(value))}"`)
    .join("");

const seconds = (ms: number): string => (Math.max(0, ms) / 1000).toFixed(3);

/** The check's title without the section list it starts with (`§5 §7 a title` → `a title`). */
function shortName(check: CheckResult): string {
  return check.title.replace(/^(?:§\d+\s+)+/, "") || check.title;
}

/**
 * Each check's <testcase> name: its short title, or, where two checks of one section would share
 * it (the same row of two endpoints' describes), the describe path before it too. CI servers key
 * a test case by classname and name: GitLab keeps one of a pair, some annotators take the second
 * for a retry of the first, and a red twin hides behind a green one.
 */
function testcaseNames(checks: readonly CheckResult[]): Map<CheckResult, string> {
  const key = (check: CheckResult) => `${testcaseClass(check)}\u0000${shortName(check)}`;
  const count = new Map<string, number>();
  for (const check of checks) count.set(key(check), (count.get(key(check)) ?? 0) + 1);
  const names = new Map<CheckResult, string>();
  for (const check of checks) {
    const path = check.id.endsWith(check.title) ? check.id.slice(0, -check.title.length) : "";
    const name = (count.get(key(check)) ?? 0) > 1 && path ? `${path}${shortName(check)}` : shortName(check);
    names.set(check, name);
  }
  return names;
}

/** The PROFILE section a check belongs to (its first), or its suite for the run's own checks. */
function testcaseClass(check: CheckResult): string {
  return check.sections[0] ? `PROFILE ${check.sections[0]}` : check.suite;
}

/** The first line of a message, short enough for an attribute CI shows in a list. */
function headline(message: string | undefined, fallback: string): string {
  const first = (message ?? "").split("\n", 1)[0]?.trim() ?? "";
  if (first === "") return fallback;
  return first.length > 200 ? `${first.slice(0, 199)}…` : first;
}

function evidenceText(evidence: readonly Evidence[]): string {
  return evidence
    .map((e) => {
      const lines = [e.curl];
      if (e.requestId !== undefined) lines.push(`X-Request-Id: ${e.requestId}`);
      if (e.response) lines.push(`→ HTTP ${e.response.status}`);
      return lines.join("\n");
    })
    .join("\n\n");
}

function testcase(check: CheckResult, name: string): string {
  const open = `    <testcase${attrs({ classname: testcaseClass(check), name, time: seconds(check.durationMs), file: check.file, line: check.line })}`;
  const children: string[] = [];
  const message = check.message ?? "";
  if (isUnderFinding(check)) {
    // one defect, one failed test case: the finding's (above); the checks that showed it point there
    children.push(
      `      <skipped${attrs({ message: `counted under ${check.findingIds?.join(", ")}: ${headline(message, "failed")}` })}/>`,
    );
  } else if (check.status === "failed") {
    children.push(
      `      <failure${attrs({ message: headline(message, "conformance failure"), type: "ConformanceFailure" })}>${escapeXmlText(message)}</failure>`,
    );
  } else if (check.status === "error") {
    children.push(
      `      <error${attrs({ message: headline(message, "harness error"), type: "HarnessError" })}>${escapeXmlText(message)}</error>`,
    );
  } else if (check.status === "inconclusive") {
    // <skipped>, not <error>: every CI test tab shows a skip's message beside the test, and none
    // counts it as a broken test; the job is red all the same (exit 2), and the check was not judged
    children.push(`      <skipped${attrs({ message: `inconclusive: ${headline(message, inconclusiveCause([message]))}` })}/>`);
  } else if (check.status === "blocked") {
    children.push(
      `      <skipped${attrs({ message: `blocked by ${check.blockedBy ?? "an earlier defect"}: ${headline(message, "")}` })}/>`,
    );
  } else if (check.status === "skipped") {
    children.push(`      <skipped${attrs({ message: message === "" ? undefined : message })}/>`);
  }
  // a pass's note (what it could not judge) where every CI test tab shows a test's output
  const out = [
    ...(passedNote(check) ? [`note: ${passedNote(check)}`] : []),
    ...(check.evidence && check.evidence.length > 0 ? [evidenceText(check.evidence)] : []),
  ];
  if (out.length > 0) children.push(`      <system-out>${escapeXmlText(out.join("\n\n"))}</system-out>`);
  return children.length === 0 ? `${open}/>` : `${open}>\n${children.join("\n")}\n    </testcase>`;
}

/** The check an annotation places a finding at: the one that failed, else the first that showed it, else the first it blocked. */
function findingSource(finding: Finding, checks: readonly CheckResult[]): CheckResult | undefined {
  const id = finding.seenIn[0] ?? finding.blocked[0];
  return checks.find((check) => check.id === id);
}

function findingCase(finding: Finding, checks: readonly CheckResult[]): string {
  const details = [
    finding.message,
    `clauses: ${finding.clauseIds.join(", ")}`,
    `endpoints: ${finding.endpoints.join(", ") || "—"}`,
    finding.kind === "response" ? `seen ${finding.occurrences}× in: ${finding.seenIn.join("; ")}` : `check: ${finding.check}`,
    ...(finding.blocked.length ? [`blocked: ${finding.blocked.join("; ")}`] : []),
    ...(finding.replay ? [`replay: sh ${finding.replay}`] : []),
  ].join("\n");
  const name = finding.clauseIds.length ? `${finding.id} ${finding.clauseIds.join(", ")}` : finding.id;
  const source = findingSource(finding, checks);
  return [
    `    <testcase${attrs({ classname: "findings", name, time: "0.000", file: source?.file, line: source?.line })}>`,
    `      <failure${attrs({ message: headline(finding.message, "finding"), type: "Finding" })}>${escapeXmlText(details)}</failure>`,
    ...(finding.evidence.length ? [`      <system-out>${escapeXmlText(evidenceText(finding.evidence))}</system-out>`] : []),
    "    </testcase>",
  ].join("\n");
}

/** Checks by their first PROFILE section, sections in order; the run's own checks last. */
function checksBySection(run: RunResult): Map<string, CheckResult[]> {
  const order = (name: string) => (/^PROFILE §(\d+)$/.exec(name) ? Number(name.slice(9)) : 99);
  const groups = new Map<string, CheckResult[]>();
  for (const check of run.checks) groups.set(testcaseClass(check), [...(groups.get(testcaseClass(check)) ?? []), check]);
  return new Map([...groups].sort(([a], [b]) => order(a) - order(b)));
}

/** A testsuite of one test case that is an <error> about the run itself. */
function runErrorSuite(run: RunResult, suite: string, name: string, type: string, message: string, text = ""): string {
  return [
    `  <testsuite${attrs({ name: suite, tests: 1, failures: 0, errors: 1, skipped: 0, time: "0.000", timestamp: run.startedAt })}>`,
    `    <testcase${attrs({ classname: suite, name, time: "0.000" })}>`,
    `      <error${attrs({ message, type })}>${escapeXmlText(text)}</error>`,
    "    </testcase>",
    "  </testsuite>",
  ].join("\n");
}

/**
 * The run's own red items, where the file alone (a CI server's test tab) would otherwise read
 * green: a run stopped by a signal lists only the checks it reached; a run that is no verdict on
 * the service (exit 2: nothing ran, or every check not passed was inconclusive) lists only skips
 * and passes.
 */
function runLevelErrors(run: RunResult): string[] {
  const noVerdict = noVerdictLine(run);
  return [
    ...(run.interrupted
      ? [
          runErrorSuite(
            run,
            "interrupted",
            "the run ended",
            "Interrupted",
            `interrupted: ran ${checksDone(run.interrupted)} checks; the rest were not run`,
          ),
        ]
      : []),
    ...(noVerdict
      ? [
          runErrorSuite(
            run,
            "no verdict",
            "the run judged the service",
            "NoVerdict",
            headline(noVerdict, "no verdict"),
            noVerdict,
          ),
        ]
      : []),
  ];
}

export function renderJunit(runInput: RunResult, options: ReportOptions = {}): string {
  // the characters XML forbids go before the keys are scrubbed (reportableRun)
  const run = reportableRun(runInput, options, stripIllegalXmlChars);
  const names = testcaseNames(run.checks);
  const { totals } = summarize(run);
  const properties = [
    `      <property${attrs({ name: "runId", value: run.runId })}/>`,
    `      <property${attrs({ name: "target.kind", value: run.target.kind })}/>`,
    `      <property${attrs({ name: "target.baseUrl", value: run.target.baseUrl })}/>`,
    ...(run.seed === undefined ? [] : [`      <property${attrs({ name: "seed", value: run.seed })}/>`]),
  ].join("\n");

  const findings = run.findings ?? [];
  const findingSuite = findings.length
    ? [
        [
          `  <testsuite${attrs({ name: "findings", tests: findings.length, failures: findings.length, errors: 0, skipped: 0, time: "0.000", timestamp: run.startedAt })}>`,
          ...findings.map((finding) => findingCase(finding, run.checks)),
          "  </testsuite>",
        ].join("\n"),
      ]
    : [];
  const suites = [...checksBySection(run)].map(([suite, checks]) => {
    const count = (status: CheckResult["status"]) => checks.filter((c) => c.status === status && !isUnderFinding(c)).length;
    const under = checks.filter(isUnderFinding).length;
    const head = `  <testsuite${attrs({
      name: suite,
      tests: checks.length,
      failures: count("failed"),
      errors: count("error"),
      skipped: count("skipped") + count("blocked") + count("inconclusive") + under,
      time: seconds(checks.reduce((sum, c) => sum + c.durationMs, 0)),
      timestamp: run.startedAt,
    })}>`;
    return [
      head,
      "    <properties>",
      properties,
      "    </properties>",
      ...checks.map((check) => testcase(check, names.get(check) ?? shortName(check))),
      "  </testsuite>",
    ].join("\n");
  });

  const runErrors = runLevelErrors(run);
  const root = `<testsuites${attrs({
    name: `agent-harness verify ${run.runId}`,
    tests: totals.total + findings.length + runErrors.length,
    failures: totals.failed + findings.length,
    errors: totals.error + runErrors.length,
    skipped: totals.skipped + totals.blocked + totals.inconclusive + totals.underFindings,
    time: seconds(totals.durationMs),
    timestamp: run.startedAt,
  })}`;
  const all = [...runErrors, ...findingSuite, ...suites];
  const body = all.length === 0 ? `${root}/>` : `${root}>\n${all.join("\n")}\n</testsuites>`;
  return `<?xml version="1.0" encoding="UTF-8"?>\n${body}\n`;
}
