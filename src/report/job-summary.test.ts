import { describe, expect, test } from "vitest";
import type { Finding } from "./findings.js";
import { markdownText, renderJobSummary } from "./job-summary.js";
import type { RunResult } from "./model.js";
import { SAMPLE_OPTIONS, SAMPLE_SECRETS, sampleCheck, sampleRun } from "./test-support.js";

const finding = (overrides: Partial<Finding> = {}): Finding => ({
  id: "F1",
  kind: "response",
  check: "www-authenticate",
  clauseIds: ["auth.required"],
  sections: ["§6"],
  endpoints: ["POST /agents", "GET /agents"],
  message: "PROFILE §6 auth.required: expected WWW-Authenticate: Bearer …; received none",
  occurrences: 20,
  seenIn: ["a", "b", "c"],
  blocked: [],
  evidence: [],
  replay: "replay-F1.sh",
  ...overrides,
});

/** The unescaped pipes of a table row: one more than its cells. */
const cellBreaks = (row: string) => row.replace(/\\\|/g, "").split("|").length - 1;

const clean = sampleRun({ checks: [sampleCheck(), sampleCheck({ id: "b", title: "another" })] });

describe("renderJobSummary", () => {
  test("a clean run: the verdict, the summary line, coverage by section, no findings", () => {
    const md = renderJobSummary(clean, { reportDir: "reports/run-1" });
    expect(md.split("\n")[0]).toBe("### agent-harness verify: ✅ passed");
    expect(md).toContain("**2 passed, 0 failed** · 2 checks in 12.3 s · embedded `http://127.0.0.1:43117/v1`");
    expect(md).not.toContain("#### Findings");
    expect(md).toContain("| §1 | 4 | 1 | 1 | 0 | 0 | 0 | 0 | 2 |");
    expect(md).toMatch(/^\| \*\*all\*\* \| 76 \| 1 \| 1 \|/m);
    expect(md).toContain("Reports in `reports/run-1`: report.html, junit.xml, results.json.");
  });

  test("a finding is one row: clause and section, headline without the clause it repeats, endpoints, how often, replay", () => {
    const md = renderJobSummary({ ...clean, findings: [finding()] });
    expect(md.split("\n")[0]).toBe("### agent-harness verify: ❌ failed");
    expect(md).toContain(
      "| **F1** | `auth.required` §6 | expected WWW-Authenticate: Bearer …; received none | POST /agents, GET /agents | 20× in 3 checks | `sh replay-F1.sh` |",
    );
  });

  test("what no finding explains is listed apart; a harness error alone is the harness's verdict", () => {
    const run = sampleRun({
      checks: [sampleCheck(), sampleCheck({ id: "e", title: "recovers", status: "error", message: "target unreachable\nstack" })],
    });
    const md = renderJobSummary(run);
    expect(md.split("\n")[0]).toBe("### agent-harness verify: ⚠️ harness error");
    expect(md).toContain("#### Not explained by a finding (1)");
    expect(md).toContain("| harness error | `transport.request-id` §1 | recovers | target unreachable |");
  });

  const headings: [string, Partial<RunResult>, string][] = [
    ["an interrupted run", { interrupted: { done: 3, total: 9 } }, "### agent-harness verify: ⏹️ interrupted after 3 of 9 checks"],
    ["a load run", { options: { ...SAMPLE_OPTIONS, scenarios: ["throughput"] } }, "### agent-harness load: ✅ passed"],
  ];
  test.for(headings)("%s says so in its heading", ([, overrides, heading]) => {
    expect(renderJobSummary({ ...clean, ...overrides }).split("\n")[0]).toBe(heading);
  });

  test("a pass with a note is listed under its own heading with what it could not judge; none, no heading", () => {
    const note = "X-RateLimit-Remaining under concurrency (limits.headers) not judged on its 64 answers: W = 1 s";
    const md = renderJobSummary(sampleRun({ checks: [sampleCheck({ title: "load: getAgent burst", note })], findings: [] }));
    expect(md.split("\n")[0]).toBe("### agent-harness verify: ✅ passed");
    expect(md).toContain("#### Passed with a note (1)");
    expect(md).toContain(`| \`transport.request-id\` §1 | load: getAgent burst | ${markdownText(note)} |`);
    expect(renderJobSummary(clean)).not.toContain("Passed with a note");
  });

  test("text from the target can neither break a table cell nor inject HTML", () => {
    // the headline is the message's first line: one line carrying it all
    const hostile = 'received {"a":"x|y"} <img src=x onerror=alert(1)> `code` **bold** [link](http://e)\nsecond';
    const md = renderJobSummary({ ...clean, findings: [finding({ message: hostile, endpoints: ["GET /a|b`c"] })] });
    const row = md.split("\n").find((line) => line.startsWith("| **F1**")) ?? "";
    expect(cellBreaks(row)).toBe(7);
    expect(md).not.toMatch(/<img/);
    expect(row).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(row).toContain("\\*\\*bold\\*\\* \\[link\\](http://e)");
    expect(markdownText("a\n\tb  c")).toBe("a b c");
  });

  test("past ten findings the rest fold into a <details>", () => {
    const findings = Array.from({ length: 13 }, (_, i) => finding({ id: `F${i + 1}` }));
    const md = renderJobSummary({ ...clean, findings });
    const open = md.slice(0, md.indexOf("<details>"));
    expect(open.match(/^\| \*\*F\d+\*\*/gm)).toHaveLength(10);
    expect(md).toContain("<details><summary>3 more findings</summary>");
    expect(md).toContain("| **F13** |");
  });

  test("a run that ran no check says so, with why, where a harness error would", () => {
    const skipped = sampleCheck({ status: "skipped", message: "needs --read-only-key" });
    const md = renderJobSummary(sampleRun({ checks: [skipped], findings: [] }));
    expect(md).toContain("### agent-harness verify: ⚠️ nothing ran");
    expect(md).toContain("**nothing ran: the 1 check selected was skipped (needs --read-only-key); no verdict; exit 2**");
  });

  test("control characters never reach the Markdown; a pipe outside a table stays a pipe", () => {
    const md = renderJobSummary(
      sampleRun({ checks: [sampleCheck({ status: "failed", message: "bell\u0007 nul\u0000 esc\u001b end" })], findings: [] }),
      { reportDir: "reports/a|b" },
    );
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is looked for
    expect(md).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/);
    expect(md).toContain("bell nul esc end");
    expect(md).toContain("Reports in `reports/a|b`");
  });

  test("no key reaches the summary", () => {
    const md = renderJobSummary(sampleRun({ findings: [finding({ message: `bad key ${SAMPLE_SECRETS[1]}` })] }), {
      secrets: [...SAMPLE_SECRETS],
    });
    expect(md).toContain("bad key \\*\\*\\*");
    for (const secret of SAMPLE_SECRETS) expect(md).not.toContain(secret);
    // a key split by a control character Markdown drops is scrubbed before it is dropped
    const [key] = SAMPLE_SECRETS;
    const split = renderJobSummary(
      sampleRun({
        checks: [sampleCheck({ status: "failed", message: `got ${key.slice(0, 4)}\u0000${key.slice(4)}` })],
        findings: [],
      }),
      { secrets: [...SAMPLE_SECRETS] },
    );
    expect(split).not.toContain(key.replace(/_/g, "\\_"));
    expect(split).toContain("got \\*\\*\\*");
  });
});
