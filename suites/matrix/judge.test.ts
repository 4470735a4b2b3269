import fc from "fast-check";
import { describe, expect, test, vi } from "vitest";
import { budgetEndedWords } from "../../src/contract/index.js";
import { FLOOD_SHORT } from "../../src/load/capacity/floods.js";
import { judgeCleanup, leftovers, type Sweep, sweptBy } from "./cleanup-row.js";
import { configArbitrary, judgeRun, OTHER_ID_FIELD, type RunSeen, targetUnavailable } from "./matrix.js";

/** The matrix's own judge can fail: each promise, broken on purpose, is named. */
const checks = (n: number, status = "passed") => Array.from({ length: n }, () => ({ status, suite: "functional" }));
const run = (over: Partial<RunSeen> & { checks?: RunSeen["results"]["checks"]; findings?: { message: string }[] }): RunSeen => ({
  code: over.code ?? 0,
  output: over.output ?? "3 passed, 0 failed",
  results: { checks: over.checks ?? checks(3), ...(over.findings ? { findings: over.findings } : {}) },
});
const quiet = { promised: 3, busy: false, deployment: true, command: "verify" as const, messageTimeoutSeconds: 3 };
/** a run whose checks erred, each with its message */
const erring = (...messages: string[]) =>
  run({
    code: 2,
    checks: [...checks(2), ...messages.map((message, i) => ({ status: "error", suite: "functional", id: `e${i}`, message }))],
  });
const budgetEnded = (T: number) => `expected 200 after ${T * 1000} ms: ${budgetEndedWords(T)}, as PROFILE §5 asks; inconclusive`;

describe("the matrix's judge", () => {
  test("a clean run that ran what the dry run promised keeps every promise", () => {
    expect(judgeRun(run({}), quiet)).toEqual([]);
  });
  test.for([
    ["a finding on a conformant server", run({ code: 1, findings: [{ message: "PROFILE §5 list.order" }] }), quiet, /finding/],
    [
      "a harness error that ends 1",
      run({ code: 1, checks: [...checks(2), { status: "error", suite: "functional" }] }),
      quiet,
      /not 2/,
    ],
    ["an internal error that ends 1", run({ code: 1, output: "agent-harness: internal error: Error: x" }), quiet, /not 2/],
    ["fewer checks than the dry run promised", run({ checks: checks(2) }), quiet, /promised 3 checks; 2 ran/],
    ["a deployment's dry run with no count", run({}), { ...quiet, promised: undefined }, /no count/],
    ["green with nothing run", run({ checks: [] }), { ...quiet, promised: 0 }, /no check run/],
    [
      "exit 2 on a quiet conformant server",
      run({ code: 2, checks: [...checks(2), { status: "error", suite: "functional", id: "x", message: "inconclusive" }] }),
      quiet,
      /quiet conformant server \(1 erred: x: inconclusive/,
    ],
    ["exit 2 with nothing run and no reason", run({ code: 2, checks: [], output: "bye" }), quiet, /no reason on its last line/],
    [
      "exit 2 with nothing run, the summary's Skipped column its only word of it",
      run({ code: 2, checks: [], output: "Section  Passed  Skipped\nall  0  0\n1 passed, 0 failed\nreports: /tmp/r" }),
      quiet,
      /no reason on its last line/,
    ],
    ["exit 2 with another client busy, naming nothing", run({ code: 2 }), { ...quiet, busy: true }, /names no inconclusive/],
  ] as const)("%s is named", ([, seen, context, pattern]) => {
    expect(judgeRun(seen, context).join("\n")).toMatch(pattern);
  });
  test("exit 2 with every scenario skipped, each naming the flag that enables it, keeps the promise", () => {
    const seen = run({
      code: 2,
      checks: [],
      output:
        "○ tier-mixed — needs --tier-burst-key\nnothing ran: the 1 check selected was skipped (needs --tier-burst-key); no verdict; exit 2",
    });
    expect(judgeRun(seen, { ...quiet, promised: undefined, command: "load" })).toEqual([]);
  });
  test("exit 2 naming the other client's activity keeps the promise", () => {
    const seen = run({ code: 2, output: "inconclusive: another client is busy in the account (agents the run did not make)" });
    expect(judgeRun(seen, { ...quiet, busy: true })).toEqual([]);
  });
  test("exit 2 at a budget no mock-slow reply fits in, every error naming it, keeps the promise", () => {
    expect(judgeRun(erring(budgetEnded(2), budgetEnded(2)), { ...quiet, messageTimeoutSeconds: 2 })).toEqual([]);
  });
  test.for([
    ["at a budget a mock-slow reply fits in", erring(budgetEnded(3)), 3],
    ["with another error beside the budget's", erring(budgetEnded(2), "the buckets never refilled: inconclusive"), 2],
    ["with an internal error beside the budget's", { ...erring(budgetEnded(2)), output: "agent-harness: internal error: x" }, 2],
  ] as const)("exit 2 on a quiet conformant server %s is named", ([, seen, T]) => {
    expect(judgeRun(seen, { ...quiet, messageTimeoutSeconds: T }).join("\n")).toMatch(/quiet conformant server/);
  });
  test("exit 2 naming a flood the generator could not make keeps the promise", () => {
    const seen = run({
      code: 2,
      output: `! capacity error — InconclusiveError: ${FLOOD_SHORT} (refusal-storm 400 req/s of 1,500)`,
    });
    expect(judgeRun(seen, { ...quiet, command: "load" })).toEqual([]);
  });
});

describe("the matrix's judge of a cleanup sweep", () => {
  const l = leftovers(Date.parse("2026-12-02T12:00:00Z"));
  const all = [...l.old, ...l.recent, ...l.foreign];
  /** what a sweep leaves when it deletes exactly what it must */
  const exactly = (sweep: Sweep) => all.filter((name) => !sweptBy(sweep, l).includes(name));
  const listing = l.old.map((name) => `would delete agt_1 ${name}`).join("\n");
  test.for([
    "every-run",
    "every-age",
    "one-run",
  ] as const)("a %s sweep that deletes exactly its agents keeps every promise", (sweep) => {
    expect(judgeCleanup({ code: 0, output: "deleted …", remaining: exactly(sweep) }, sweep, l)).toEqual([]);
    // the names: a killed run two hours before, a run of now, another client's
    expect(l.old[0]).toMatch(/^ah-2026-12-02T10-00-00-000Z-[0-9a-f]{6}-/);
    expect(l.recent[0]).toMatch(/^ah-2026-12-02T12-00-00-000Z-[0-9a-f]{6}-/);
  });
  test("a dry run that lists what it would delete and deletes nothing keeps every promise", () => {
    expect(judgeCleanup({ code: 0, output: listing, remaining: all }, "dry-run", l)).toEqual([]);
  });
  test("with another client busy, an exit 2 saying the Delete bucket stayed empty keeps the promises, nothing wrongly deleted", () => {
    const seen = {
      code: 2,
      output:
        "agent-harness cleanup: DELETE agt_1 answered 429 RATE_LIMIT_EXCEEDED: still rate-limited after the retries; run it again later; 2 agent(s) left",
      remaining: all,
    };
    expect(judgeCleanup(seen, "every-run", l, true)).toEqual([]);
    expect(judgeCleanup({ ...seen, remaining: [...l.old] }, "every-run", l, true).join("\n")).toMatch(/going-1 was deleted/);
  });
  test.for([
    [
      "exit 0 with a killed run's agent left",
      { code: 0, output: "", remaining: [l.old[1]!, ...exactly("every-run")] },
      "every-run",
      /exit 0, yet .*killed-2 is still there/,
    ],
    [
      "a running run's agents deleted",
      { code: 0, output: "", remaining: [...l.foreign] },
      "every-run",
      /going-1 was deleted: a run started less than/,
    ],
    [
      "exit 0 from --older-than 0 with a running run's agent left",
      { code: 0, output: "", remaining: [l.recent[0]!, ...l.foreign] },
      "every-age",
      /exit 0, yet .*going-1 is still there/,
    ],
    [
      "another client's agent deleted",
      { code: 0, output: "", remaining: [...l.old, ...l.recent.slice(1)].slice(0, 2) },
      "one-run",
      /someone-else-kept was deleted: another client's/,
    ],
    [
      "an agent outside --prefix deleted",
      { code: 0, output: "", remaining: [...l.foreign] },
      "one-run",
      /killed-1 was deleted: another run's, outside --prefix/,
    ],
    [
      "a dry run that deleted",
      { code: 0, output: listing, remaining: exactly("every-run") },
      "dry-run",
      /killed-1 was deleted: --dry-run deletes nothing/,
    ],
    [
      "a dry run that listed nothing",
      { code: 0, output: "0 agent(s)", remaining: all },
      "dry-run",
      /--dry-run did not list .*killed-1/,
    ],
    [
      "a dry run that lists a running run's agent as one it would delete",
      { code: 0, output: `${listing}\nwould delete agt_9 ${l.recent[0]}`, remaining: all },
      "dry-run",
      /--dry-run listed .*going-1 as one it would delete: a run started less than/,
    ],
    [
      "an agent with the harness's prefix but no run's name deleted",
      { code: 0, output: "", remaining: all.filter((n) => n !== "ah-notes-kept" && !l.old.includes(n)) },
      "every-run",
      /ah-notes-kept was deleted: another client's/,
    ],
    [
      "an exit 2 for an emptied Delete bucket with no other client in the account",
      {
        code: 2,
        output: "DELETE agt_1 answered 429 RATE_LIMIT_EXCEEDED: still rate-limited after the retries; run it again later",
        remaining: all,
      },
      "every-run",
      /cleanup exited 2 on a conformant deployment/,
    ],
    [
      "an exit 1 on a conformant deployment",
      { code: 1, output: "FAILED (500) agt_1", remaining: exactly("every-run") },
      "every-run",
      /cleanup exited 1 on a conformant deployment: FAILED/,
    ],
  ] as const)("%s is named", ([, seen, sweep, pattern]) => {
    expect(judgeCleanup(seen, sweep, l).join("\n")).toMatch(pattern);
  });
});

describe("the rows the matrix draws", () => {
  test("a cleanup row sweeps a deployment directly, with none of verify's or load's flags; no other row has a sweep", () => {
    const drawn = fc.sample(configArbitrary(), { seed: 7, numRuns: 300 });
    const sweeps = drawn.filter((c) => c.command === "cleanup");
    expect(sweeps.length).toBeGreaterThan(20);
    expect(new Set(sweeps.map((c) => c.sweep)).size).toBe(4);
    for (const c of sweeps) {
      expect(["serve", "alt"]).toContain(c.target);
      expect(c).toMatchObject({ network: "none", selection: [], referenceFaults: false, bail: false, keySet: "main" });
      for (const flag of [
        "profile",
        "sections",
        "flood",
        "out",
        "compare",
        "shard",
        "workers",
        "failingModel",
        "pinned",
      ] as const)
        expect(c[flag], flag).toBeUndefined();
    }
    // the connections a sweep may take are drawn among them
    expect(
      sweeps.some((c) => c.tls === "mutual") && sweeps.some((c) => c.proxy === "through") && sweeps.some((c) => c.busy),
    ).toBe(true);
    expect(drawn.filter((c) => c.command !== "cleanup" && c.sweep !== undefined)).toEqual([]);
  });
  test("another identifier field is drawn for the independent server alone, in each command", () => {
    const drawn = fc.sample(configArbitrary(), { seed: 8, numRuns: 300 });
    expect(drawn.filter((c) => c.idField !== undefined && c.target !== "alt")).toEqual([]);
    expect(new Set(drawn.filter((c) => c.idField === OTHER_ID_FIELD).map((c) => c.command))).toEqual(
      new Set(["verify", "load", "cleanup"]),
    );
  });
});

describe("the targets this machine cannot start", () => {
  test("only the container target needs Docker, and CI never skips it: its row runs and fails there", async () => {
    // a daemon that is not there
    vi.stubEnv("DOCKER_HOST", "unix:///nonexistent/agent-harness-docker.sock");
    try {
      vi.stubEnv("CI", "true");
      expect(await targetUnavailable({ target: "container" })).toBeUndefined();
      vi.stubEnv("CI", "");
      expect(await targetUnavailable({ target: "container" })).toMatch(/^Docker is not reachable/);
      for (const target of ["embedded", "serve", "alt"] as const) expect(await targetUnavailable({ target })).toBeUndefined();
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
