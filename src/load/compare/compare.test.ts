import { describe, expect, test } from "vitest";
import { mulberry32 } from "../../arbitraries/mulberry32.js";
import { LatencyBlocks } from "../blocks.js";
import { encodeHistogram } from "../capacity/tally.js";
import { newHistogram, summarizeHistogram } from "../recorder.js";
import type { LoadRun } from "../run-of-scenarios.js";
import type { ScenarioReport } from "../scenario-run.js";
import {
  compareLines,
  compareRuns,
  compareVerdict,
  fewestAnswers,
  judgeable,
  notComparable,
  parseGate,
  regressions,
  unfitScenarios,
  unjudgedGates,
  unjudgedLine,
} from "./compare.js";

const SEED = 20_261_128;
const ENDPOINTS = ["GET /agents", "POST /agents"] as const;

/** Latencies (ms) as a loopback service gives them: lognormal around `medianMs`, a long tail. */
function latencies(random: () => number, n: number, medianMs: number, shiftMs = 0): number[] {
  return Array.from({ length: n }, () => {
    const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    return medianMs * Math.exp(0.6 * normal) + shiftMs;
  });
}

/**
 * A run of one scenario whose endpoints answered `samples(endpoint)` (ms), in that order over
 * 10 s; `blocks` false leaves out the time blocks, as a load.json written before them has none.
 */
function run(id: string, samples: (endpoint: string) => number[], scenario = "capacity", blocks = true): LoadRun {
  const latency: ScenarioReport["latency"] = {};
  const histograms: NonNullable<ScenarioReport["histograms"]> = {};
  const timeBlocks = new LatencyBlocks();
  let answers = 0;
  for (const endpoint of ENDPOINTS) {
    const h = newHistogram();
    const all = samples(endpoint);
    all.forEach((ms, i) => {
      const us = Math.max(1, Math.round(ms * 1000));
      h.recordValue(us);
      timeBlocks.record(endpoint, "2xx", (i / all.length) * 10_000, us);
    });
    answers += h.totalCount;
    latency[endpoint] = { "2xx": summarizeHistogram(h) };
    histograms[endpoint] = { "2xx": encodeHistogram(h) };
  }
  const report: ScenarioReport = {
    id: scenario,
    title: scenario,
    clauses: ["limits.tier"],
    status: "passed",
    durationMs: 10_000,
    failures: [],
    observations: [],
    latency,
    histograms,
    ...(blocks ? { blocks: timeBlocks.toJSON() } : {}),
    latencyNote: "",
    latencyJudged: true,
    statusPerSecond: [],
    conformance: { responses: answers, checked: answers, share: 1, sampling: "every response" },
    transportErrors: {},
    rps: answers / 10,
    errors: 0,
    generator: { eventLoopLagP99Ms: 1, eventLoopLagMaxMs: 1, cpuShare: 0.1, saturated: false, note: "" },
  };
  return {
    runId: id,
    startedAt: "2026-11-28T00:00:00Z",
    finishedAt: "2026-11-28T00:00:10Z",
    target: { kind: "embedded", baseUrl: "http://127.0.0.1:1/v1", windowSeconds: 2, messageTimeoutSeconds: 4.5 },
    scenarios: [report],
    thresholds: [],
  };
}

const P99 = [parseGate("p99:+10%")].filter((g) => typeof g !== "string");
const JUDGED = new Set(["capacity"]);

describe(`load compare (seed ${SEED})`, () => {
  test("A/A: two runs drawn from one service never alarm at p99:+10%", () => {
    const random = mulberry32(SEED);
    // five pairs of runs of 800 answers per endpoint: the same build, sampled twice each time
    for (let pair = 0; pair < 5; pair++) {
      const [a, b] = [run("a", () => latencies(random, 800, 4)), run("b", () => latencies(random, 800, 4))];
      expect(notComparable(a, b)).toBeUndefined();
      expect(regressions(compareRuns(a, b), P99, JUDGED).map((r) => r.message)).toEqual([]);
    }
  });

  test("A/A with a busy second: the machine's stall in one run is noise, not a regression, once whole blocks are resampled", () => {
    const random = mulberry32(SEED + 4);
    // 500 answers per endpoint, the fewest a p99 is judged from; in the second run the machine
    // stalls for half a second (the answers then wait 150 ms more), as a loaded runner does
    const a = run("a", () => latencies(random, 500, 4));
    const stalled = () => latencies(random, 500, 4).map((ms, i) => (i >= 300 && i < 325 ? ms + 150 : ms));
    const b = run("b", stalled);
    expect(regressions(compareRuns(a, b), P99, JUDGED).map((r) => r.message)).toEqual([]);
    // answers resampled one by one call the stall a regression: the reason whole blocks are resampled
    const unblocked = run("b", stalled, "capacity", false);
    expect(regressions(compareRuns(a, unblocked), P99, JUDGED).length).toBeGreaterThan(0);
  });

  test("A/A with few answers: a p99 of under 500 answers is shown, never judged; the median still is", () => {
    const random = mulberry32(SEED + 6);
    // 40 answers per endpoint, as an endpoint a 10 s run seldom calls gives: the p99 is the largest
    // answer, and its resamples only shuffle the few largest; of 40 such pairs some differ "beyond
    // noise" by chance when judged, so none is
    const P99_AND_P50 = [parseGate("p99:+10%"), parseGate("p50:+25ms")].filter((g) => typeof g !== "string");
    for (let pair = 0; pair < 40; pair++) {
      const [a, b] = [run("a", () => latencies(random, 40, 4)), run("b", () => latencies(random, 40, 4))];
      const changes = compareRuns(a, b);
      expect(regressions(changes, P99_AND_P50, JUDGED).map((r) => r.message)).toEqual([]);
      const p99 = changes[0]!.latency.filter((f) => f.figure === "p99");
      expect(p99.every((f) => !f.judgeable && !f.beyondNoise)).toBe(true);
    }
    const [a, b] = [run("a", () => latencies(random, 40, 4)), run("b", () => latencies(random, 40, 4, 30))];
    expect(regressions(compareRuns(a, b), P99_AND_P50, JUDGED).map((r) => r.message.split(" p50 ")[0])).toEqual(
      ENDPOINTS.map((e) => `capacity ${e}`),
    );
    expect(compareLines(compareRuns(a, b)).join("\n")).toMatch(/p99 .* too few answers to judge/);
    // a gate judged on no endpoint is said, never passed; one judged everywhere is not listed
    const [unjudged, ...rest] = unjudgedGates(compareRuns(a, b), P99_AND_P50, JUDGED);
    expect(rest).toEqual([]);
    expect(unjudged && unjudgedLine(unjudged)).toBe(
      "p99:+10%: judged nowhere: every endpoint had fewer than 500 answers in a run, the fewest a p99 is judged from (capacity GET /agents n=40/40, capacity POST /agents n=40/40); drive longer or gate on a lower quantile",
    );
    const [c, d] = [
      run("c", () => latencies(random, 500, 4)),
      run("d", (e) => latencies(random, e === "GET /agents" ? 500 : 499, 4)),
    ];
    expect(unjudgedGates(compareRuns(c, d), P99_AND_P50, JUDGED).map(unjudgedLine)).toEqual([
      "p99:+10%: not judged on 1 of 2 endpoints, fewer than 500 answers in a run, the fewest a p99 is judged from: capacity POST /agents n=500/499",
    ]);
  });

  test.for([
    [99, 500],
    [95, 100],
    [90, 50],
    [50, 20],
  ] as const)("p%i is judged from %i answers in each run: 5 above it, and 20 in all", ([q, fewest]) => {
    expect(fewestAnswers(q)).toBe(fewest);
    expect(judgeable(q, fewest, fewest)).toBe(true);
    expect(judgeable(q, fewest, fewest - 1)).toBe(false);
    expect(judgeable(q, fewest - 1, fewest)).toBe(false);
  });

  test("an endpoint answered in one run only is said, never silently left out of a gate", () => {
    const random = mulberry32(SEED + 7);
    const a = run("a", () => latencies(random, 600, 4));
    const b = run("b", (e) => (e === "POST /agents" ? [] : latencies(random, 600, 4)));
    const changes = compareRuns(a, b);
    expect(compareLines(changes).join("\n")).toContain("POST /agents [2xx] n=600/0: answered in one run only, not compared");
    expect(unjudgedGates(changes, P99, JUDGED).map(unjudgedLine)).toEqual([
      "p99:+10%: not judged on 1 of 2 endpoints, fewer than 500 answers in a run, the fewest a p99 is judged from: capacity POST /agents n=600/0",
    ]);
  });

  test("A/A on a machine busier during the second run: latency the machine's lag explains is not a regression", () => {
    const random = mulberry32(SEED + 5);
    const a = run("a", () => latencies(random, 800, 4));
    const b = run("b", () => latencies(random, 800, 4).map((ms) => ms * 1.5));
    // same lag: the ×1.5 is the build's
    expect(regressions(compareRuns(a, b), P99, JUDGED).length).toBe(ENDPOINTS.length);
    // CURRENT's event-loop lag p99 was 40 ms where BASE's was 2: a machine ×4 busier explains ×1.5
    b.scenarios[0]!.generator.eventLoopLagP99Ms = 40;
    a.scenarios[0]!.generator.eventLoopLagP99Ms = 2;
    expect(regressions(compareRuns(a, b), P99, JUDGED)).toEqual([]);
  });

  test("the same build 30 ms further away alarms, naming the endpoint and the figure", () => {
    const random = mulberry32(SEED + 1);
    const a = run("a", () => latencies(random, 800, 4));
    const b = run("b", () => latencies(random, 800, 4, 30));
    const broken = regressions(compareRuns(a, b), P99, JUDGED);
    expect(broken.map((r) => r.message.split(" p99 ")[0])).toEqual(ENDPOINTS.map((e) => `capacity ${e}`));
    expect(broken[0]?.gate).toBe("p99:+10%");
  });

  test("a slower endpoint alone is the one named; a change inside the tolerance is not", () => {
    const random = mulberry32(SEED + 2);
    const a = run("a", () => latencies(random, 800, 4));
    const b = run("b", (e) => latencies(random, 800, 4, e === "POST /agents" ? 30 : 0));
    expect(regressions(compareRuns(a, b), P99, JUDGED).map((r) => r.message.split(" p99 ")[0])).toEqual([
      "capacity POST /agents",
    ]);
    const loose = [parseGate("p99:+500ms")].filter((g) => typeof g !== "string");
    expect(regressions(compareRuns(a, b), loose, JUDGED)).toEqual([]);
    // a scenario whose latency holds intended waits is shown, never judged
    expect(regressions(compareRuns(a, b), P99, new Set())).toEqual([]);
  });

  test("other scenarios or other target settings are not comparable, and say which", () => {
    const random = mulberry32(SEED + 3);
    const a = run("a", () => latencies(random, 50, 4));
    expect(
      notComparable(
        a,
        run("b", () => latencies(random, 50, 4), "throughput"),
      ),
    ).toMatch(/BASE capacity, CURRENT throughput/);
    const slower = run("c", () => latencies(random, 50, 4));
    slower.target.windowSeconds = 60;
    expect(notComparable(a, slower)).toMatch(/windowSeconds 2 in BASE, 60 in CURRENT/);
    // the same build 40 ms further away (--network-delay) is another network, not a regression
    const far = run("d", () => latencies(random, 50, 4));
    far.target.network = "40 ± 20 ms each way";
    expect(notComparable(a, far)).toMatch(/network none in BASE, 40 ± 20 ms each way in CURRENT/);
    const container = run("e", () => latencies(random, 50, 4));
    container.target.kind = "container";
    expect(notComparable(a, container)).toMatch(/kind embedded in BASE, container in CURRENT/);
  });

  test("capacity drives of other keys files, shards or shapes are not comparable; runs that drove nothing are not either", () => {
    const random = mulberry32(SEED + 4);
    const drive = (id: string, settings: Partial<NonNullable<ScenarioReport["capacity"]>["settings"]>) => {
      const r = run(id, () => latencies(random, 50, 4));
      const base = {
        profile: "steady",
        share: 0.8,
        durationSeconds: 60,
        rampSeconds: 5,
        intervalSeconds: 5,
        tenants: 50,
        keys: 200,
      };
      r.scenarios[0]!.capacity = { settings: { ...base, offeredPerSecond: 400, ...settings } } as ScenarioReport["capacity"];
      return r;
    };
    const a = drive("a", {});
    expect(notComparable(a, drive("b", {}))).toBeUndefined();
    // a keys file of higher tiers offers more: its figures are another load's
    expect(notComparable(a, drive("c", { offeredPerSecond: 800 }))).toMatch(
      /offered another rate: 400 req\/s in BASE, 800 in CURRENT/,
    );
    // a merge of three shards compares as the one-process run of the same drive: its rate the
    // shards' rounded rates added
    expect(notComparable(a, drive("m", { shards: 3, offeredPerSecond: 400.2 }))).toBeUndefined();
    expect(notComparable(a, drive("d", { tenants: 10, keys: 40 }))).toMatch(/scenario capacity ran with other settings/);
    expect(notComparable(a, drive("e", { shard: { index: 1, count: 3 } }))).toMatch(/"shard"/);
    const none = (id: string) => ({ ...run(id, () => []), scenarios: [] });
    expect(notComparable(none("f"), none("g"))).toMatch(/no scenario ran in either run/);
  });

  test("a scenario that did not pass in either run is no reference and no candidate: no verdict, exit 2, never a pass", () => {
    const random = mulberry32(SEED + 5);
    const a = run("a", () => latencies(random, 800, 4));
    const b = run("b", () => latencies(random, 800, 4));
    b.scenarios[0]!.status = "failed";
    const unfit = unfitScenarios(a, b);
    expect(unfit).toEqual([{ scenario: "capacity", line: "CURRENT's capacity failed" }]);
    const changes = compareRuns(a, b, SEED);
    const verdict = compareVerdict(regressions(changes, P99, JUDGED), unjudgedGates(changes, P99, JUDGED), unfit, 1);
    expect(verdict).toEqual({ line: "no verdict: CURRENT's capacity failed", code: 2 });
    a.scenarios[0]!.status = "inconclusive";
    a.scenarios[0]!.message = "InconclusiveError: the flood did not reach what it set out to do\nmore";
    b.scenarios[0]!.status = "passed";
    expect(unfitScenarios(a, b).map((u) => u.line)).toEqual([
      "BASE's capacity inconclusive (InconclusiveError: the flood did not reach what it set out to do)",
    ]);
    expect(compareVerdict([], [], [], 1)).toEqual({ line: "no regression beyond tolerance and noise", code: 0 });
  });

  test("rps: judged unrounded, and only where latency is judged (a bucket's waits set the rate of its scenario)", () => {
    const random = mulberry32(SEED + 6);
    const slow = (id: string, answers: number) => {
      const r = run(id, () => latencies(random, answers / 2, 4));
      r.scenarios[0]!.durationMs = 40_000;
      return r;
    };
    // 22 and 20 answers in 40 s: 0.55 → 0.5 a second (−9%), which the report's one decimal shows as 0.6 → 0.5 (−17%)
    const [a, b] = [slow("a", 11 * 2), slow("b", 10 * 2)];
    const rps = [parseGate("rps:-10%")].filter((g) => typeof g !== "string");
    expect(regressions(compareRuns(a, b), rps, JUDGED)).toEqual([]);
    const halved = slow("c", 5 * 2);
    expect(regressions(compareRuns(a, halved), rps, JUDGED).map((r) => r.message)).toEqual([
      expect.stringMatching(/^capacity rps 0\.55 → 0\.25 \(−54\.55%\) beyond rps:-10%$/),
    ]);
    expect(regressions(compareRuns(a, halved), rps, new Set())).toEqual([]);
    // judged nowhere is no verdict, never a pass
    const unjudged = unjudgedGates(compareRuns(a, halved), rps, new Set());
    expect(unjudged.map(unjudgedLine)).toEqual([
      "rps:-10%: judged nowhere: no scenario of these runs has latency or throughput a gate judges",
    ]);
    expect(compareVerdict([], unjudged, [], 1)).toEqual({ line: "no verdict: rps:-10% judged on no endpoint", code: 2 });
  });

  test.for([
    ["p99:+10%", { figure: "p99", relative: 0.1 }],
    ["p95:+20ms", { figure: "p95", absoluteMs: 20 }],
    ["rps:-10%", { figure: "rps", relative: 0.1 }],
    ["errors:+0.5%", { figure: "errors", relative: 0.005 }],
    ["p99<10", /expected FIGURE/],
    ["rps:+10%", /downwards/],
    ["p99:-10%", /upwards/],
    ["errors:+5ms", /only a latency quantile/],
  ] as const)("--max-regression %s", ([source, expected]) => {
    const gate = parseGate(source);
    if (expected instanceof RegExp) expect(gate).toMatch(expected);
    else expect(gate).toMatchObject(expected);
  });
});
