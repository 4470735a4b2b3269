import { describe, expect, test } from "vitest";
import { summarize } from "./model.js";
import { colorEnabled, formatProgress, formatSummary } from "./terminal.js";
import { SAMPLE_SECRETS, sampleCheck, sampleRun } from "./test-support.js";

const ESC = "\u001b";
const NOTE =
  "X-RateLimit-Remaining under concurrency (limits.headers) not judged on its 64 answers: at W = 1 s none is surely counted in the window it describes, whatever the service answers";

describe("formatProgress", () => {
  test("one plain line: symbol, clause id, title, time", () => {
    const line = formatProgress(sampleCheck(), { color: false });
    expect(line).toBe("✓  transport.request-id  every response carries X-Request-Id  12 ms");
  });

  test.for([
    ["failed", "✗"],
    ["error", "!"],
    ["skipped", "○"],
  ] as const)("%s shows %s and the first line of its message", ([status, symbol]) => {
    const line = formatProgress(sampleCheck({ status, message: "expected 400\nreceived 201" }), { color: false });
    expect(line.startsWith(`${symbol}  `)).toBe(true);
    expect(line.endsWith("— expected 400")).toBe(true);
    expect(line).not.toContain("\n");
  });

  test("a pass with a note says what it could not judge on its line; a pass without says nothing more", () => {
    const line = formatProgress(sampleCheck({ note: NOTE, message: "never shown for a pass" }), { color: false });
    expect(line).toBe(`✓  transport.request-id  every response carries X-Request-Id  12 ms  — note: ${NOTE.slice(0, 159)}…`);
    expect(formatProgress(sampleCheck({ message: "never shown for a pass" }), { color: false })).not.toContain("—");
  });

  test("colour only when asked", () => {
    expect(formatProgress(sampleCheck(), { color: true })).toContain(`${ESC}[32m`);
    expect(formatProgress(sampleCheck({ status: "failed" }), { color: false })).not.toContain(ESC);
  });

  test("text from a response cannot drive the terminal or leak a key", () => {
    const line = formatProgress(
      sampleCheck({ status: "failed", message: `got ${ESC}[2J${ESC}]0;owned\u0007 and ${SAMPLE_SECRETS[0]}` }),
      { color: false, secrets: [...SAMPLE_SECRETS] },
    );
    expect(line).not.toContain(ESC);
    expect(line).not.toContain("\u0007");
    expect(line).not.toContain(SAMPLE_SECRETS[0]);
    expect(line).toContain("and ***");
  });
});

describe("colorEnabled", () => {
  test.for([
    [true, {}, true],
    [false, {}, false],
    [undefined, {}, false],
    [true, { NO_COLOR: "1" }, false],
    [true, { NO_COLOR: "" }, true],
    [true, { TERM: "dumb" }, false],
    [false, { FORCE_COLOR: "1" }, true],
    [true, { FORCE_COLOR: "0" }, false],
    [false, { NO_COLOR: "1", FORCE_COLOR: "1" }, false],
  ] as const)("isTTY %s, env %o → %s", ([isTTY, env, expected]) => {
    expect(colorEnabled({ isTTY }, env)).toBe(expected);
  });
});

describe("formatSummary", () => {
  test("ends with the plain line N passed, N failed, N error, N skipped (the same counts as the cards)", () => {
    const text = formatSummary(sampleRun(), { color: true });
    expect(text.split("\n").at(-1)).toBe("3 passed, 2 failed, 1 error, 1 skipped");
  });

  test("no skipped part when nothing was skipped", () => {
    const run = sampleRun({ checks: [sampleCheck(), sampleCheck({ status: "failed" })] });
    expect(formatSummary(run, { color: false }).split("\n").at(-1)).toBe("1 passed, 1 failed");
  });

  test("a table by section, the failures again, the uncovered MUST clauses", () => {
    const text = formatSummary(sampleRun(), { color: false });
    const lines = text.split("\n");
    expect(lines).toContain("Section  Clauses  Covered  Passed  Failed  Errors  Blocked  Skipped  Uncovered MUST");
    expect(lines).toContain("§1             4        2       2       0       0        0        0               1");
    expect(text).toContain("Failures (3):");
    // counted against the registry, so the figure follows it as clauses are added
    const uncovered = summarize(sampleRun()).uncovered.length;
    expect(text).toContain(`Uncovered MUST clauses (${uncovered}): transport.request-id-echo (§1), `);
    expect(text).toContain(`and ${uncovered - 12} more`);
    expect(text).not.toContain(ESC);
  });

  test("the passes with a note are listed whole, under the failures and above the table", () => {
    const run = sampleRun({ checks: [sampleCheck({ title: "load: getAgent burst", note: NOTE }), sampleCheck()] });
    const lines = formatSummary(run, { color: false }).split("\n");
    const at = lines.indexOf("Notes (1): passed, with part of what they saw not judged");
    expect(at).toBeGreaterThanOrEqual(0);
    expect(lines[at + 1]).toBe(`  load: getAgent burst: ${NOTE}`);
    expect(lines.findIndex((l) => l.startsWith("Section"))).toBeGreaterThan(at);
    expect(formatSummary(sampleRun(), { color: false })).not.toContain("Notes (");
  });

  test("no key in the summary", () => {
    const text = formatSummary(sampleRun(), { color: false, secrets: [...SAMPLE_SECRETS] });
    for (const secret of SAMPLE_SECRETS) expect(text).not.toContain(secret);
  });
});

test("a coloured vitest message shows as plain text on the progress line", () => {
  const line = formatProgress(sampleCheck({ status: "failed", message: `${ESC}[31mexpected 400${ESC}[39m` }), { color: false });
  expect(line.endsWith("— expected 400")).toBe(true);
});
