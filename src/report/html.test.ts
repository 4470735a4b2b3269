import { describe, expect, test } from "vitest";
import { escapeHtml, renderHtml } from "./html.js";
import { checkFailedByF1, SAMPLE_OPTIONS, SAMPLE_SECRETS, sampleCheck, sampleRun } from "./test-support.js";

const html = renderHtml(sampleRun(), { secrets: [...SAMPLE_SECRETS] });

describe("renderHtml", () => {
  test("failures first (conformance failures, then harness errors), then coverage, then every check", () => {
    const at = (marker: string) => {
      const index = html.indexOf(marker);
      expect(index, marker).toBeGreaterThanOrEqual(0);
      return index;
    };
    const order = [
      at('<section id="failures">'),
      at('<article class="check failed" id="check-2">'),
      at('<article class="check failed" id="check-3">'),
      at('<article class="check error" id="check-4">'),
      at('<section id="coverage">'),
      at('<section id="checks">'),
    ];
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(html.match(/<article /g)).toHaveLength(3);
  });

  /** What the page shows of the run (its header) and of one failure (check 2 of the sample run). */
  const failure = html.slice(html.indexOf('id="check-2"'), html.indexOf('id="check-3"'));
  test.for([
    ["the header", html, "embedded · http://127.0.0.1:43117/v1"],
    ["the header", html, "2025-01-31T09-05-07-123Z-3f9a1c"],
    ["the header", html, "<dd>424242</dd>"],
    ["the header", html, "<dd>12.3 s</dd>"],
    ["the header", html, "3 passed, 2 failed, 1 error, 1 skipped"],
    ["a failure", failure, "received status 201 (the name was stored)"],
    ["a failure", failure, "POST http://127.0.0.1:43117/v1/agents"],
    ["a failure", failure, "HTTP 201"],
    ["a failure", failure, "curl -sS -X POST"],
    ["a failure", failure, "X-Request-Id <code>req_01HZX3</code>"],
    ["a failure", failure, "String bounds count Unicode code points"],
  ])("%s shows %s", ([, part, shown]) => {
    expect(part).toContain(shown);
  });

  test("coverage names the uncovered MUST clauses of each section", () => {
    const coverage = html.slice(html.indexOf('<section id="coverage">'), html.indexOf('<section id="checks">'));
    expect(coverage).toMatch(/<th scope="row">§1<\/th><td class="num">4<\/td>/);
    expect(coverage).toContain(">transport.request-id-echo</code>");
    expect(coverage).not.toContain(">transport.request-id</code>");
    expect(coverage).not.toContain(">reference.deterministic</code>");
  });

  test("everything is escaped, control characters made visible", () => {
    const page = renderHtml(
      sampleRun({
        checks: [sampleCheck({ title: `<script>alert("x")</script> & 'q'`, status: "failed", message: "bell\u0007 nul\u0000" })],
      }),
    );
    expect(page).not.toContain("<script");
    expect(page).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;");
    expect(page).toContain("bell\u2407 nul\u2400");
    expect(escapeHtml("\ud800x\u007f")).toBe("\ufffdx\u2421");
  });

  test("a pass with a note shows it under the check, and its section counts it", () => {
    const note = "X-RateLimit-Remaining under concurrency (limits.headers) not judged on its 64 answers: W < 2 s";
    const page = renderHtml(sampleRun({ checks: [sampleCheck({ title: "burst", note })], findings: [] }));
    expect(page).toContain(`burst<div class="note">note: ${escapeHtml(note)}</div>`);
    expect(page).toContain("1 passed, 1 passed with a note");
  });

  test("self-contained: no scripts, no external stylesheets, images or fonts", () => {
    expect(html).not.toMatch(/<script|<link|<img|<iframe|@import|url\(/i);
    expect(html).not.toMatch(/(src|href)="(?!#)/);
  });

  test("a long body is cut, with a pointer to results.json", () => {
    const body = "x".repeat(5000);
    const run = sampleRun();
    const check = run.checks[2];
    if (!check?.evidence?.[0]?.response) throw new Error("sample changed");
    check.evidence[0].response.body = body;
    const page = renderHtml(run);
    expect(page).not.toContain(body);
    expect(page).toContain("3000 more characters (whole body in results.json)");
  });

  test("no key reaches the page", () => {
    for (const secret of SAMPLE_SECRETS) expect(html).not.toContain(secret);
    const tricky = `k<&>"'ey-123`;
    const page = renderHtml(sampleRun({ options: { ...SAMPLE_OPTIONS, idField: tricky } }), { secrets: [tricky] });
    expect(page).not.toContain(escapeHtml(tricky));
    expect(page).not.toContain(escapeHtml(JSON.stringify(tricky)));
  });

  test("findings first; coverage bars count passed checks only; skipped grouped by the flag; a filter", () => {
    const checks = [
      checkFailedByF1("§2 a page"),
      // two checks skipped for the same missing flag
      ...[
        ["b", "§6 read-only 1"],
        ["c", "§6 read-only 2"],
      ].map(([id, title]) =>
        sampleCheck({
          id,
          title,
          status: "skipped",
          message: "needs --read-only-key",
          clauseIds: ["auth.permissions"],
          sections: ["§6"],
        }),
      ),
    ];
    const html = renderHtml(
      sampleRun({
        checks,
        findings: [
          {
            id: "F1",
            kind: "response",
            check: "success-schema",
            clauseIds: ["envelope.list"],
            sections: ["§2"],
            endpoints: ["GET /agents"],
            message: "PROFILE §2 envelope.list: expected hasMore = page < totalPages; received true",
            occurrences: 3,
            seenIn: ["a"],
            blocked: [],
            evidence: [],
            replay: "replay-F1.sh",
          },
        ],
      }),
    );
    expect(html.indexOf('id="findings"')).toBeLessThan(html.indexOf('id="coverage"'));
    expect(html).toContain('<a href="replay-F1.sh">');
    expect(html).toContain("pass <code>--read-only-key</code> to run 2 more checks");
    // §6 has only skipped checks: its bar is empty, not full
    expect(html).toMatch(
      /<th scope="row">§6<\/th><td class="num">\d+<\/td><td class="num"><span class="bar"[^>]*><span style="width:0%">/,
    );
    expect(html).toContain('id="show-failed"');
    expect(html).toMatch(/<p class="line">1 finding \(1 failed check under it\); 0 passed, 0 failed, 2 skipped<\/p>/);
  });

  test("the header: options one short item each, never a key or JSON; the service clock the times were judged on", () => {
    const page = renderHtml(sampleRun({ serviceClock: { source: "date", offsetMs: 10_020, uncertaintyMs: 50, probes: 4 } }), {
      secrets: [...SAMPLE_SECRETS],
    });
    const header = page.slice(page.indexOf("<header>"), page.indexOf("</header>"));
    expect(header).toContain('<li><span class="opt">suites</span> functional, property</li>');
    expect(header).toContain('<li><span class="opt">keys</span> main ×3, read-only, other-account, quota</li>');
    expect(header).not.toMatch(/[{}]/);
    expect(header).toContain(
      "<dt>Service clock</dt><dd>+10.02 s ± 0.05 s from the runner&#39;s (its Date header, 4 requests)</dd>",
    );
  });

  test("the property summary: figures and the from → to table, an allowed road never taken marked", () => {
    const property = {
      cases: 1380,
      sequences: 200,
      requests: 7064,
      durationMs: 31_800,
      generators: ["create.valid", "list.walk"],
      transitions: { "new>active": 345, "active>error": 58 },
    };
    const page = renderHtml(sampleRun({ property }));
    const section = page.slice(page.indexOf('<section id="property">'), page.indexOf('<section id="skipped">'));
    expect(section).toContain("1380 generated cases and 200 command sequences, 7064 requests in 31.8 s");
    expect(section).toContain("2 of 13 allowed pairs reached");
    // a pair below the minimum is a line of its own, never only a number in the table
    expect(section).toContain("<li>inactive → active: reached 0 times, below 3</li>");
    expect(section).not.toContain("<li>active → error");
    expect(section).toContain('<tr><th scope="row">new</th><td class="num">345</td>');
    // inactive → active is allowed and was never taken; new → error PROFILE forbids
    expect(section).toMatch(/<tr><th scope="row">inactive<\/th><td class="num error" title="allowed, never reached">0<\/td>/);
    expect(section).toMatch(
      /<tr><th scope="row">new<\/th>(?:<td[^>]*>[^<]*<\/td>){2}<td class="num none" title="PROFILE does not allow it">·<\/td>/,
    );
    expect(renderHtml(sampleRun())).not.toContain('id="property"');
  });

  test("the badge says what the exit code says: a finding beside a harness error is a failed run, the error listed", () => {
    const checks = [
      checkFailedByF1("§2 lists a page"),
      sampleCheck({ id: "e", title: "§7 a window", status: "error", message: "HarnessError: could not keep its timing" }),
    ];
    const findings = [
      {
        id: "F1",
        kind: "check" as const,
        check: "a",
        clauseIds: ["envelope.list"],
        sections: ["§2"],
        endpoints: ["GET /agents"],
        message: "PROFILE §2 envelope.list: expected hasMore false; received true",
        occurrences: 1,
        seenIn: ["a"],
        blocked: [],
        evidence: [],
      },
    ];
    const page = renderHtml(sampleRun({ checks, findings }));
    expect(page).toContain('<span class="verdict failed">FAILED</span>');
    expect(page).toContain("Not explained by a finding (1)");
    expect(page).toContain("could not keep its timing");
    // a harness error beside checks that ran, and a run that ran no check: each says which
    expect(renderHtml(sampleRun({ checks: [checks[1]!], findings: [] }))).toContain(
      '<span class="verdict error">HARNESS ERROR</span>',
    );
    const nothing = renderHtml(sampleRun({ checks: [] }));
    expect(nothing).toContain('<span class="verdict error">NOTHING RAN</span>');
    expect(nothing).toMatch(/<p class="line">nothing ran: [^<]*selected no check; no verdict; exit 2<\/p>/);
  });
});
