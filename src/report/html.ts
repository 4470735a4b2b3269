import { describeServiceClock } from "../client/service-clock.js";
import { CLAUSE_BY_ID } from "../contract/clauses.js";
import {
  describeShortfall,
  isAllowedTransition,
  MIN_PER_PAIR,
  pairsBelowMinimum,
  TRANSITION_FROM,
  TRANSITION_TO,
  type TransitionFrom,
  type TransitionTo,
  transitionCoverage,
  transitionKey,
} from "../model/transitions.js";
import { endpointList, type Finding } from "./findings.js";
import { HTML_STYLE } from "./html-style.js";
import {
  type CheckResult,
  type CheckStatus,
  checksDone,
  type Evidence,
  formatDuration,
  passedNote,
  type RunResult,
  type RunSummary,
} from "./model.js";
import type { PropertySummary } from "./property.js";
import type { ReportOptions } from "./redact.js";
import { inconclusiveCause } from "./verdict.js";
import { reportView } from "./view.js";

/**
 * report.html: one self-contained page for a person — inline CSS, no scripts, no external
 * assets, so it opens from a CI artifact or an email attachment. Findings come first (one per
 * defect, with the evidence and the replay script), then checks no finding explains, then
 * coverage by PROFILE section (bars count passed checks only), then skipped checks by the flag
 * that enables them, then every check by section — a section with nothing red folded away.
 */

/** Bodies longer than this are cut in the page; results.json keeps them whole. */
const BODY_EXCERPT_CHARS = 2000;
/** Evidence shown open per failure; earlier requests fold into one <details>. */
const EVIDENCE_SHOWN = 3;

/** C0 controls and DEL become their visible Control Pictures (U+2400…), lone surrogates U+FFFD. */
function visibleControls(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\u007E\u0080-\u{10FFFF}]/gu, (ch) =>
      String.fromCharCode(ch === "\u007F" ? 0x2421 : 0x2400 + ch.charCodeAt(0)),
    )
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
}

const HTML_ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return visibleControls(text).replace(/[&<>"']/g, (ch) => HTML_ENTITIES[ch] ?? ch);
}

const STATUS_LABEL: Record<CheckStatus, string> = {
  passed: "passed",
  failed: "failed",
  error: "error",
  inconclusive: "inconclusive",
  blocked: "blocked",
  skipped: "skipped",
};
const badge = (status: CheckStatus) => `<span class="badge ${status}">${STATUS_LABEL[status]}</span>`;

function clauseCode(id: string): string {
  const clause = CLAUSE_BY_ID.get(id);
  const title = clause ? `${clause.section} ${clause.level}: ${clause.text}` : "not in the clause registry";
  return `<code class="clause${clause ? "" : " unknown"}" title="${escapeHtml(title)}">${escapeHtml(id)}</code>`;
}

/** As received, never re-formatted: pretty-printing JSON would hide duplicate keys and rewrite 1e2 as 100. */
function excerpt(body: string): string {
  if (body.length <= BODY_EXCERPT_CHARS) return body;
  return `${body.slice(0, BODY_EXCERPT_CHARS)}\n… ${body.length - BODY_EXCERPT_CHARS} more characters (whole body in results.json)`;
}

function headerLines(headers: Record<string, string>): string {
  return Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join("\n");
}

function evidenceBlock(e: Evidence, index: number, count: number): string {
  const request = [`${e.request.method} ${e.request.url}`, headerLines(e.request.headers)].filter((s) => s !== "").join("\n");
  const requestText = e.request.body === undefined ? request : `${request}\n\n${excerpt(e.request.body)}`;
  let responseText = "no response";
  if (e.response) {
    const response = [`HTTP ${e.response.status}`, headerLines(e.response.headers)].filter((s) => s !== "").join("\n");
    responseText = e.response.body === undefined ? response : `${response}\n\n${excerpt(e.response.body)}`;
  }
  const requestId = e.requestId === undefined ? "" : ` · X-Request-Id <code>${escapeHtml(e.requestId)}</code>`;
  return `<div class="evidence">
<p class="evidence-head">Request ${index + 1} of ${count}${requestId}</p>
<div class="exchange"><div><p class="label">request</p><pre>${escapeHtml(requestText)}</pre></div><div><p class="label">response</p><pre>${escapeHtml(responseText)}</pre></div></div>
<p class="label">replay</p><pre class="curl">${escapeHtml(e.curl)}</pre>
</div>`;
}

function evidenceList(evidence: readonly Evidence[]): string {
  const blocks = evidence.map((e, i) => evidenceBlock(e, i, evidence.length));
  if (blocks.length <= EVIDENCE_SHOWN) return blocks.join("\n");
  const earlier = blocks.slice(0, -EVIDENCE_SHOWN);
  return `<details><summary>${earlier.length} earlier request${earlier.length === 1 ? "" : "s"}</summary>\n${earlier.join("\n")}\n</details>\n${blocks.slice(-EVIDENCE_SHOWN).join("\n")}`;
}

const anchor = (run: RunResult, check: CheckResult) => `check-${run.checks.indexOf(check)}`;

function failureArticle(run: RunResult, check: CheckResult): string {
  const clauses = check.clauseIds
    .map((id) => {
      const clause = CLAUSE_BY_ID.get(id);
      const text = clause ? `${clause.section} · ${escapeHtml(clause.text)}` : "<em>not in the clause registry</em>";
      return `<li>${clauseCode(id)} ${text}</li>`;
    })
    .join("");
  const where = [check.suite, check.file, formatDuration(check.durationMs)].filter((s): s is string => s !== undefined);
  const kind =
    check.status === "failed"
      ? "ConformanceFailure — the target broke the clause"
      : check.status === "blocked"
        ? `blocked by ${check.blockedBy ?? "an earlier defect"}`
        : check.status === "inconclusive"
          ? `Inconclusive — ${inconclusiveCause([check.message])} kept it from judging; no finding`
          : "HarnessError — the harness could not judge";
  return `<article class="check ${check.status}" id="${anchor(run, check)}">
<h3>${badge(check.status)} ${escapeHtml(check.title)}</h3>
<p class="where">${where.map(escapeHtml).join(" · ")} · <span class="kind">${kind}</span></p>
${clauses === "" ? "" : `<ul class="clauses">${clauses}</ul>`}
<pre class="message">${escapeHtml(check.message ?? "(no message)")}</pre>
${check.evidence && check.evidence.length > 0 ? evidenceList(check.evidence) : '<p class="none">No request evidence recorded.</p>'}
</article>`;
}

function coverageTable(summary: RunSummary): string {
  const rows = Object.values(summary.coverage).map((s) => {
    const covered = s.checked.length;
    // the bar is what this run showed conformant: clauses whose checks passed, never skipped ones
    const pct = s.clauses === 0 ? 0 : Math.round((s.passed / s.clauses) * 100);
    const uncovered = s.uncovered.length === 0 ? '<span class="none">—</span>' : s.uncovered.map(clauseCode).join(" ");
    const n = (value: number, cls: string) => `<td class="num${value > 0 ? ` ${cls}` : ""}">${value}</td>`;
    return `<tr><th scope="row">${escapeHtml(s.section)}</th><td class="num">${s.clauses}</td><td class="num"><span class="bar" title="${s.passed} of ${s.clauses} clauses passed"><span style="width:${pct}%"></span></span>${covered}</td>${n(s.passed, "passed")}${n(s.failed, "failed")}${n(s.error + s.inconclusive, "error")}${n(s.blocked, "blocked")}${n(s.skipped, "skipped")}<td>${uncovered}</td></tr>`;
  });
  const all = Object.values(summary.coverage);
  const sum = (pick: (s: (typeof all)[number]) => number) => all.reduce((total, s) => total + pick(s), 0);
  const totalRow = `<tr class="total"><th scope="row">all</th><td class="num">${sum((s) => s.clauses)}</td><td class="num">${sum((s) => s.checked.length)}</td><td class="num">${sum((s) => s.passed)}</td><td class="num">${sum((s) => s.failed)}</td><td class="num">${sum((s) => s.error + s.inconclusive)}</td><td class="num">${sum((s) => s.blocked)}</td><td class="num">${sum((s) => s.skipped)}</td><td>${summary.uncovered.length} uncovered MUST</td></tr>`;
  return `<table class="coverage">
<thead><tr><th>Section</th><th class="num">Clauses</th><th class="num">Covered</th><th class="num">Passed</th><th class="num">Failed</th><th class="num">Errors</th><th class="num">Blocked</th><th class="num">Skipped</th><th>Uncovered MUST clauses</th></tr></thead>
<tbody>
${rows.join("\n")}
${totalRow}
</tbody>
</table>
<p class="note">Counted in clauses: a clause takes the worst status of the checks citing it (failed, error, inconclusive, blocked, passed, then skipped; Errors counts the inconclusive too: neither was judged). The bar shows the clauses whose checks passed. Hover a clause id for its text.</p>`;
}

const RED: ReadonlySet<CheckStatus> = new Set(["failed", "error", "inconclusive", "blocked"]);

function checkRow(run: RunResult, check: CheckResult): string {
  // a red check links to what explains it: its finding, or its own article when no finding does
  const target = check.blockedBy ?? check.findingIds?.[0];
  const title = target
    ? `<a href="#finding-${escapeHtml(target)}">${escapeHtml(check.title)}</a>`
    : RED.has(check.status)
      ? `<a href="#${anchor(run, check)}">${escapeHtml(check.title)}</a>`
      : escapeHtml(check.title);
  const findings = (check.findingIds ?? []).map((id) => `<a href="#finding-${id}">${id}</a>`).join(" ");
  const note =
    check.status === "passed"
      ? escapeHtml(passedNote(check) ? `note: ${passedNote(check)}` : "")
      : escapeHtml(
          check.status === "blocked" && check.blockedBy
            ? `blocked by ${check.blockedBy}`
            : ((check.message ?? "").split("\n", 1)[0] ?? ""),
        );
  return `<tr class="${check.status}"><td>${badge(check.status)}</td><td>${check.clauseIds.map(clauseCode).join(" ")}</td><td>${title}${note === "" ? "" : `<div class="note">${note}</div>`}${findings === "" ? "" : `<div class="note">findings: ${findings}</div>`}</td><td class="num">${escapeHtml(formatDuration(check.durationMs))}</td></tr>`;
}

/** "2 passed with a note" (what they could not judge), or nothing. */
function noteCount(checks: readonly CheckResult[]): string[] {
  const noted = checks.filter((c) => passedNote(c) !== undefined).length;
  return noted ? [`${noted} passed with a note`] : [];
}

/** One PROFILE section's checks; folded away when nothing in it is red. */
function sectionGroup(run: RunResult, section: string, checks: readonly CheckResult[]): string {
  const counts = (["passed", "failed", "error", "inconclusive", "blocked", "skipped"] as const)
    .map((status) => [status, checks.filter((c) => c.status === status).length] as const)
    .filter(([, count]) => count > 0)
    .map(([status, count]) => `${count} ${status}`)
    .concat(noteCount(checks))
    .join(", ");
  const red = checks.some((c) => RED.has(c.status));
  return `<details class="group ${red ? "red" : "green"}"${red ? " open" : ""}>
<summary><b>${escapeHtml(section)}</b> <span class="counts">${escapeHtml(counts)}</span></summary>
<table class="checks">
<thead><tr><th>Status</th><th>Clauses</th><th>Check</th><th class="num">Time</th></tr></thead>
<tbody>
${checks.map((check) => checkRow(run, check)).join("\n")}
</tbody>
</table>
</details>`;
}

/** Checks by the first PROFILE section they cite, in registry order; the run's own (cleanup) last. */
function checksBySection(run: RunResult): Map<string, CheckResult[]> {
  const order = (section: string) => (/^§(\d+)$/.exec(section) ? Number(section.slice(1)) : 99);
  const groups = new Map<string, CheckResult[]>();
  for (const check of run.checks) {
    const section = check.sections[0] ?? check.suite;
    groups.set(section, [...(groups.get(section) ?? []), check]);
  }
  return new Map([...groups].sort(([a], [b]) => order(a) - order(b)));
}

/** Skipped checks by the reason (the flag that enables them): "pass --read-only-key to run 10 more checks". */
function skippedByFlag(run: RunResult): string {
  const byReason = new Map<string, CheckResult[]>();
  for (const check of run.checks.filter((c) => c.status === "skipped")) {
    const reason = (check.message ?? "skipped").split("\n", 1)[0] ?? "skipped";
    byReason.set(reason, [...(byReason.get(reason) ?? []), check]);
  }
  if (byReason.size === 0) return '<p class="none">No check was skipped.</p>';
  return [...byReason]
    .map(([reason, checks]) => {
      const flag = /^needs (--[a-z-]+)/.exec(reason)?.[1];
      const head = flag
        ? `pass <code>${escapeHtml(flag)}</code> to run ${checks.length} more check${checks.length === 1 ? "" : "s"}`
        : `${escapeHtml(reason)} (${checks.length})`;
      return `<details class="skipped-group"><summary>${head}</summary><ul>${checks.map((c) => `<li>${escapeHtml(c.title)}</li>`).join("")}</ul></details>`;
    })
    .join("\n");
}

/** What the property-based suites generated, and the from → to table of the status roads they drove. */
function propertySection(property: PropertySummary | undefined): string {
  if (!property) return "";
  const { reached, allowed } = transitionCoverage(property.transitions);
  const short = pairsBelowMinimum(property.transitions);
  const cell = (from: TransitionFrom, to: TransitionTo) => {
    if (!isAllowedTransition(from, to)) return '<td class="num none" title="PROFILE does not allow it">·</td>';
    const n = property.transitions[transitionKey(from, to)] ?? 0;
    return `<td class="num${n === 0 ? " error" : ""}"${n === 0 ? ' title="allowed, never reached"' : ""}>${n}</td>`;
  };
  const rows = TRANSITION_FROM.map(
    (from) => `<tr><th scope="row">${escapeHtml(from)}</th>${TRANSITION_TO.map((to) => cell(from, to)).join("")}</tr>`,
  );
  return `<section id="property">
<h2>Property-based runs</h2>
<p>${property.cases} generated cases and ${property.sequences} command sequences, ${property.requests} requests in ${escapeHtml(formatDuration(property.durationMs))}.</p>
<p>Status transitions the stateful commands drove agents through: ${reached} of ${allowed} allowed pairs reached${short.length ? "" : `, each at least ${MIN_PER_PAIR} times`}.</p>
${short.length ? `<p class="error">Pairs below ${MIN_PER_PAIR}:</p><ul>${short.map((t) => `<li>${escapeHtml(describeShortfall(t))}</li>`).join("")}</ul>` : ""}
<table class="transitions">
<thead><tr><th>from \\ to</th>${TRANSITION_TO.map((to) => `<th class="num">${escapeHtml(to)}</th>`).join("")}</tr></thead>
<tbody>
${rows.join("\n")}
</tbody>
</table>
<details><summary>${property.generators.length} generators covered</summary><p class="note">${property.generators.map(escapeHtml).join(", ")}</p></details>
</section>`;
}

function findingArticle(finding: Finding): string {
  const clauses = finding.clauseIds
    .map((id) => {
      const clause = CLAUSE_BY_ID.get(id);
      return `<li>${clauseCode(id)} ${clause ? `${clause.section} · ${escapeHtml(clause.text)}` : ""}</li>`;
    })
    .join("");
  const facts = [
    finding.endpoints.length ? `on ${endpointList(finding.endpoints)}` : "",
    finding.kind === "response"
      ? `seen ${finding.occurrences}× in ${finding.seenIn.length} check${finding.seenIn.length === 1 ? "" : "s"}`
      : finding.seenIn.length
        ? `${finding.occurrences} failed check${finding.occurrences === 1 ? "" : "s"}`
        : `a failed setup, ${finding.occurrences}×`,
    finding.blocked.length ? `blocked ${finding.blocked.length} check${finding.blocked.length === 1 ? "" : "s"}` : "",
    finding.firstRequestId ? `first request ${finding.firstRequestId}` : "",
  ].filter((f) => f !== "");
  const replay = finding.replay
    ? `<p class="replay">Replay: <a href="${escapeHtml(finding.replay)}"><code>${escapeHtml(finding.replay)}</code></a> — exits 1 while the defect is there, 0 once it is gone</p>`
    : "";
  const evidence = [...(finding.setup ? [finding.setup.evidence] : []), ...finding.evidence.slice(0, 1)];
  return `<article class="finding" id="finding-${escapeHtml(finding.id)}">
<h3><span class="fid">${escapeHtml(finding.id)}</span> ${escapeHtml(finding.message.split("\n", 1)[0] ?? "")}</h3>
<p class="where">${facts.map(escapeHtml).join(" · ")}</p>
<ul class="clauses">${clauses}</ul>
${replay}
${evidence.length ? `<details><summary>evidence (${evidence.length} request${evidence.length === 1 ? "" : "s"})</summary>${evidenceList(evidence)}</details>` : ""}
${finding.seenIn.length ? `<details><summary>checks</summary><ul>${finding.seenIn.map((id) => `<li>${escapeHtml(id)}</li>`).join("")}</ul></details>` : ""}
</article>`;
}

/** The facts of a run the header lists: target, id, seed, start, duration and the service's clock. */
function runFacts(run: RunResult, durationMs: number): [string, string][] {
  return [
    ["Target", `${run.target.kind} · ${run.target.baseUrl}`],
    ["Run id", run.runId],
    ["Seed", run.seed === undefined ? "none" : String(run.seed)],
    ["Started", run.startedAt],
    ["Duration", formatDuration(durationMs)],
    // its times (X-RateLimit-Reset, createdAt, updatedAt) were judged on this clock
    ...(run.serviceClock
      ? [["Service clock", describeServiceClock(run.serviceClock).replace(/^service clock: /, "")] satisfies [string, string]]
      : []),
  ];
}

/** The same counts, in the same words, as the summary line under them. */
function totalCards(findings: number, totals: ReturnType<typeof reportView>["summary"]["totals"]): string {
  return [
    ...(findings ? [`<div class="card findings"><b>${findings}</b>findings</div>`] : []),
    ...(totals.underFindings ? [`<div class="card under"><b>${totals.underFindings}</b>failed under findings</div>`] : []),
    ...(["passed", "failed", "error", "inconclusive", "blocked", "skipped"] as const)
      .filter((status) => (status !== "blocked" && status !== "inconclusive") || totals[status] > 0)
      .map((status) => `<div class="card ${status}"><b>${totals[status]}</b>${status === "error" ? "errors" : status}</div>`),
  ].join("");
}

/** The badge: it says what the exit code says (a finding beside a harness error is a failed run). */
function verdictBadge(view: ReturnType<typeof reportView>) {
  const { run } = view;
  const verdict = view.inconclusive
    ? "inconclusive"
    : ({ 0: "passed", 1: "failed", 2: "error", 130: "interrupted" } as const)[view.exitCode];
  const text = {
    passed: "PASSED",
    failed: "FAILED",
    error: view.nothingRan ? "NOTHING RAN" : "HARNESS ERROR",
    inconclusive: `INCONCLUSIVE: ${view.inconclusiveCause}`,
    interrupted: `INTERRUPTED after ${run.interrupted ? checksDone(run.interrupted) : "?"} checks`,
  }[verdict];
  return { verdict, verdictText: text };
}

export function renderHtml(runInput: RunResult, options: ReportOptions = {}): string {
  const view = reportView(runInput, options);
  const { run, summary } = view;
  const { totals } = summary;
  const findings = run.findings ?? [];
  const { verdict, verdictText } = verdictBadge(view);
  const red = view.unexplained;

  const meta = runFacts(run, totals.durationMs);
  const optionItems = view.options
    .map(([name, value]) => `<li><span class="opt">${escapeHtml(name)}</span> ${escapeHtml(value)}</li>`)
    .join("");

  const cards = totalCards(findings.length, totals);
  const findingList =
    findings.length === 0 ? '<p class="none">No findings.</p>' : findings.map((f) => findingArticle(f)).join("\n");
  const failures =
    red.length === 0
      ? ""
      : `<section id="failures">\n<h2>Not explained by a finding (${red.length})</h2>\n${red.map((check) => failureArticle(run, check)).join("\n")}\n</section>`;

  const unknown =
    summary.unknownClauseIds.length === 0
      ? ""
      : `<p class="warning">Checks cite clause ids that are not in the registry: ${summary.unknownClauseIds.map(clauseCode).join(" ")}</p>`;

  const groups = [...checksBySection(run)].map(([section, checks]) => sectionGroup(run, section, checks)).join("\n");

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(`${verdictText} · agent-harness verify · ${run.runId}`)}</title>
<style>${HTML_STYLE}</style>
</head>
<body>
<header>
<h1>agent-harness verify <span class="verdict ${verdict}">${verdictText}</span></h1>
<dl class="meta">
${meta.map(([name, value]) => `<dt>${escapeHtml(name)}</dt><dd>${escapeHtml(value)}</dd>`).join("\n")}
<dt>Options</dt><dd><ul class="options">${optionItems}</ul></dd>
</dl>
<div class="totals">${cards}<div class="card"><b>${totals.total}</b>checks</div></div>
<p class="line">${escapeHtml(view.line)}</p>
</header>
<main>
<section id="findings">
<h2>Findings (${findings.length})</h2>
${findingList}
</section>
${failures}
<section id="coverage">
<h2>Coverage by PROFILE section</h2>
${coverageTable(summary)}
${unknown}
</section>
${propertySection(run.property)}
<section id="skipped">
<h2>Skipped (${totals.skipped})</h2>
${skippedByFlag(run)}
</section>
<section id="checks">
<h2>All checks by PROFILE section</h2>
<div class="filter">Show: <label><input type="radio" name="show" id="show-all" checked> all</label><label><input type="radio" name="show" id="show-failed"> failed</label><label><input type="radio" name="show" id="show-skipped"> skipped</label></div>
${groups === "" ? '<p class="none">No checks ran.</p>' : groups}
</section>
</main>
<footer>Written by agent-harness from run ${escapeHtml(run.runId)}, finished ${escapeHtml(run.finishedAt)}. The whole record, with untruncated bodies, is in results.json beside this file.</footer>
</body>
</html>
`;
}
