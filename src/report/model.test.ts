import { describe, expect, test } from "vitest";
import { CLAUSES, type Clause } from "../contract/clauses.js";
import {
  type CheckResult,
  exitCodeOf,
  formatDuration,
  inconclusiveLine,
  nothingRanLine,
  redChecks,
  summarize,
  summaryLine,
  totalsOf,
  worstStatus,
} from "./model.js";
import { sampleCheck, sampleRun } from "./test-support.js";

const REGISTRY: Clause[] = [
  { id: "a.one", section: "§1", level: "MUST", text: "" },
  { id: "a.two", section: "§1", level: "MUST", text: "" },
  { id: "a.ref", section: "§1", level: "REFERENCE", text: "" },
  { id: "b.one", section: "§2", level: "MUST", text: "" },
  { id: "b.two", section: "§2", level: "MUST", text: "" },
  { id: "b.three", section: "§2", level: "MUST", text: "" },
  { id: "c.one", section: "§3", level: "MUST", text: "" },
];

describe("totals", () => {
  test("count checks by status; duration is the wall clock of the run", () => {
    expect(totalsOf(sampleRun())).toEqual({
      passed: 3,
      failed: 2,
      underFindings: 0,
      error: 1,
      inconclusive: 0,
      blocked: 0,
      skipped: 1,
      total: 7,
      findings: 0,
      durationMs: 12_333,
    });
  });

  test("without parseable timestamps the duration is the sum of the checks", () => {
    const run = sampleRun({
      startedAt: "",
      finishedAt: "",
      checks: [sampleCheck({ durationMs: 5 }), sampleCheck({ durationMs: 7 })],
    });
    expect(totalsOf(run).durationMs).toBe(12);
  });
});

describe("coverage", () => {
  const run = sampleRun({
    checks: [
      sampleCheck({ clauseIds: ["a.one"], status: "passed" }),
      sampleCheck({ clauseIds: ["a.one", "b.one"], status: "failed" }),
      sampleCheck({ clauseIds: ["b.two"], status: "passed" }),
      sampleCheck({ clauseIds: ["b.two"], status: "error" }),
      sampleCheck({ clauseIds: ["b.three"], status: "skipped" }),
      sampleCheck({ clauseIds: ["a.ref", "a.ref"], status: "passed" }),
      sampleCheck({ clauseIds: ["zz.typo"], status: "passed" }),
    ],
  });
  const summary = summarize(run, REGISTRY);

  test("sections in registry order, counted in clauses", () => {
    expect(Object.keys(summary.coverage)).toEqual(["§1", "§2", "§3"]);
    expect(summary.coverage["§1"]).toEqual({
      section: "§1",
      clauses: 3,
      checked: ["a.one", "a.ref"],
      passed: 1,
      failed: 1,
      error: 0,
      inconclusive: 0,
      blocked: 0,
      skipped: 0,
      uncovered: ["a.two"],
    });
  });

  test("a clause takes the worst status of its checks: failed > error > passed > skipped", () => {
    expect(summary.coverage["§2"]).toMatchObject({
      checked: ["b.one", "b.two", "b.three"],
      failed: 1,
      error: 1,
      skipped: 1,
      passed: 0,
    });
    expect(worstStatus(["skipped", "passed"])).toBe("passed");
    expect(worstStatus(["passed", "error", "skipped"])).toBe("error");
    expect(worstStatus(["error", "failed"])).toBe("failed");
    expect(worstStatus([])).toBeUndefined();
  });

  test("a MUST clause no check cites is uncovered; a REFERENCE clause never is", () => {
    expect(summary.coverage["§3"]).toMatchObject({ clauses: 1, checked: [], uncovered: ["c.one"] });
    expect(summary.uncovered).toEqual(["a.two", "c.one"]);
  });

  test("ids missing from the registry are reported, not counted", () => {
    expect(summary.unknownClauseIds).toEqual(["zz.typo"]);
  });

  test("a run of some sections or clauses (--sections) is held to covering those alone", () => {
    const chosen = summarize(sampleRun({ ...run, options: { ...run.options, sections: ["§3", "a.two"] } }), REGISTRY);
    expect(Object.keys(chosen.coverage)).toEqual(["§1", "§3"]);
    expect(chosen.coverage["§1"]).toMatchObject({ clauses: 1, checked: [], uncovered: ["a.two"] });
    expect(chosen.uncovered).toEqual(["a.two", "c.one"]);
  });

  test("against the real registry, a run with no checks leaves every MUST clause uncovered", () => {
    const empty = summarize(sampleRun({ checks: [] }));
    expect(empty.uncovered).toEqual(CLAUSES.filter((c) => c.level === "MUST").map((c) => c.id));
    expect(Object.values(empty.coverage).reduce((n, s) => n + s.clauses, 0)).toBe(CLAUSES.length);
  });
});

describe("summaryLine", () => {
  test.for([
    [{ passed: 12, failed: 0, error: 0, skipped: 0 }, "12 passed, 0 failed"],
    [{ passed: 3, failed: 2, error: 0, skipped: 4 }, "3 passed, 2 failed, 4 skipped"],
    [{ passed: 3, failed: 2, error: 1, skipped: 0 }, "3 passed, 2 failed, 1 error"],
    [{ passed: 3, failed: 1, error: 0, blocked: 2, skipped: 0, findings: 2 }, "2 findings; 3 passed, 1 failed, 2 blocked"],
    [
      { passed: 369, failed: 0, underFindings: 43, error: 0, skipped: 0, findings: 1 },
      "1 finding (43 failed checks under it); 369 passed, 0 failed",
    ],
    [{ passed: 0, failed: 0, error: 0, skipped: 0 }, "0 passed, 0 failed"],
  ] as const)("%o → %s", ([totals, line]) => {
    expect(summaryLine(totals)).toBe(line);
  });
});

test("red checks: conformance failures, then harness errors, each in run order", () => {
  const run = sampleRun({
    checks: [
      sampleCheck({ id: "e1", status: "error" }),
      sampleCheck({ id: "f1", status: "failed" }),
      sampleCheck({ id: "p1" }),
      sampleCheck({ id: "f2", status: "failed" }),
    ],
  });
  expect(redChecks(run).map((c) => c.id)).toEqual(["f1", "f2", "e1"]);
});

test.for([
  [850, "850 ms"],
  [12_340, "12.3 s"],
  [123_000, "2 min 03 s"],
] as const)("formatDuration(%d) = %s", ([ms, text]) => {
  expect(formatDuration(ms)).toBe(text);
});

test.for([
  ["a finding beside a harness error", ["failed", "error"], 1],
  ["a blocked check beside a harness error", ["blocked", "error"], 1],
  ["a harness error alone", ["passed", "error"], 2],
  ["every check passed", ["passed", "skipped"], 0],
  ["nothing ran", ["skipped"], 2],
  ["an inconclusive check and no finding", ["passed", "inconclusive"], 2],
  ["a finding beside an inconclusive check", ["failed", "inconclusive"], 1],
] as const)("exit code: %s → %i", ([, statuses, code]) => {
  const run = sampleRun({ checks: statuses.map((status, i) => sampleCheck({ id: `c${i}`, status })), findings: [] });
  expect(exitCodeOf(run)).toBe(code);
});

describe("an inconclusive run", () => {
  const run = sampleRun({
    checks: [
      sampleCheck({ id: "p1" }),
      sampleCheck({ id: "i1", status: "inconclusive", message: "2 agent(s) this run did not make appeared (x, y)\nmore" }),
    ],
    findings: [],
  });

  test("its last line names what another client did, and exit 2", () => {
    expect(inconclusiveLine(run)).toBe(
      "inconclusive: 1 check could not be judged, another client's activity in the account (2 agent(s) this run did not make appeared (x, y)); no finding; exit 2",
    );
    expect(summaryLine(totalsOf(run))).toBe("1 passed, 0 failed, 1 inconclusive");
  });

  test("a failure decides instead: no inconclusive line", () => {
    expect(inconclusiveLine({ ...run, checks: [...run.checks, sampleCheck({ id: "f", status: "failed" })] })).toBeUndefined();
  });
});

/** STYLE §7: a run that judged nothing exits 2 and says why on its last line, never a green summary alone. */
describe("a run that ran no check of its selection", () => {
  const cleanup = sampleCheck({ id: "run.cleanup", suite: "run", status: "passed" });

  test("none selected: the last line names the suites and what was asked", () => {
    const run = sampleRun({
      checks: [cleanup],
      findings: [],
      options: { ...sampleRun().options, suites: ["property"], sections: ["transport.health", "auth.key-hash"] },
    });
    expect(exitCodeOf(run)).toBe(2);
    expect(nothingRanLine(run)).toBe(
      "nothing ran: property has no check for --sections transport.health,auth.key-hash; no verdict; exit 2",
    );
  });

  test("every one skipped: the last line gives their reasons, each with how many it kept", () => {
    const skipped = (id: string, message: string) => sampleCheck({ id, status: "skipped", message });
    const run = (...checks: CheckResult[]) => sampleRun({ checks: [cleanup, ...checks], findings: [] });
    expect(nothingRanLine(run(skipped("s1", "needs --load-key\nmore"), skipped("s2", "needs --load-key")))).toBe(
      "nothing ran: the 2 checks selected were all skipped (needs --load-key); no verdict; exit 2",
    );
    expect(
      nothingRanLine(run(skipped("s1", "needs --load-key"), skipped("s2", "needs --tier"), skipped("s3", "needs --tier"))),
    ).toBe("nothing ran: the 3 checks selected were all skipped (1: needs --load-key; 2: needs --tier); no verdict; exit 2");
  });

  test("the run's own row that broke comes first", () => {
    const bound = sampleCheck({
      id: "run.bound",
      title: "the run's bound",
      suite: "run",
      status: "error",
      message: "stopped at 60 s\nmore",
    });
    const run = sampleRun({
      checks: [cleanup, bound, sampleCheck({ id: "s1", status: "skipped", message: "needs --tier" })],
      findings: [],
    });
    expect(nothingRanLine(run)).toBe("nothing ran: the run's bound: stopped at 60 s; no verdict; exit 2");
  });

  test("one check ran: no such line", () => {
    expect(nothingRanLine(sampleRun({ checks: [cleanup, sampleCheck({ id: "p1" })], findings: [] }))).toBeUndefined();
  });
});
