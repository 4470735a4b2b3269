import { describe, expect, test } from "vitest";
import { RATE_LIMITS } from "../contract/index.js";
import type { FootprintEntry } from "./footprint.js";
import { formatPlan, planRun } from "./plan.js";
import { scheduleLanes } from "./schedule.js";

const entry = (over: Partial<FootprintEntry>): FootprintEntry => ({
  check: "suites/functional/x.test.ts::a",
  key: "main#0",
  account: "main",
  endpoint: "getAgent",
  counted: true,
  ...over,
});
const many = (n: number, over: Partial<FootprintEntry>) => Array.from({ length: n }, () => entry(over));
/** A check that empties a bucket: `counted` requests admitted, then one refused (a 429 counts nowhere). */
const drain = (check: string, counted: number, over: Partial<FootprintEntry> = {}, emptied = 60) => [
  ...many(counted, { check, ...over }),
  entry({ check, counted: false, emptied, ...over }),
];

const limits = { windowSeconds: 60, tierLimit: 60, mainKeys: 1 };

describe("the order the requests are sent in (PROFILE §7: a bucket admits its size per window)", () => {
  test("a bucket emptied on purpose makes the next request there wait for its refill, however few came before", () => {
    // the calibration's drain met a tier nearly spent: 5 admitted; a deployment's tier admits what is left
    const entries = [...drain("f::drain", 5), entry({ check: "f::after" })];
    const plan = planRun(entries, limits, "test");
    // by count, 6 requests fit one window: no wait
    expect(plan.lowerBoundWindows).toBe(1);
    expect(plan.lowerBoundSeconds).toBe(60);
    // the tier and the key's Get bucket are as full (every Get counts in both): both are taken as emptied
    expect(plan.lanes).toEqual([{ lane: "run", seconds: 60, waits: { "Get on key main#0": 1 } }]);
    expect(formatPlan(plan)).toContain("needs ≥ 1 windows by count: tier of the main account → 0 s");
    expect(formatPlan(plan)).toContain("  run: 60 s, waiting for 1 refill (Get on key main#0 1)");
    expect(formatPlan(plan)).toContain("plan: lower bound 60 s (the slowest order)");
  });

  test("a drain fills what its window has left: one the calibration's short window refilled mid-way counts one window", () => {
    const tier = limits.tierLimit;
    const entries = [
      entry({ check: "f::before", endpoint: "listAgents" }),
      ...drain("f::drain", tier + 10),
      entry({ check: "f::after" }),
    ];
    // one refill, not two: the 70 admitted in calibration stand for the 59 a window would have left
    const [lane] = scheduleLanes(entries, limits);
    expect(lane?.seconds).toBe(60);
    expect(Object.values(lane?.waits ?? {})).toEqual([1]);
  });

  test("without drains the order adds nothing to the count: ⌈requests / size⌉ windows", () => {
    const creates = RATE_LIMITS.perKeyEndpoint.createAgent;
    const entries = many(creates * 3 + 1, { endpoint: "createAgent" });
    const [lane] = scheduleLanes(entries, limits);
    expect(lane?.seconds).toBe(3 * 60);
    expect(planRun(entries, limits, "test").lowerBoundSeconds).toBe(3 * 60);
  });

  test("lanes run side by side: the slowest sets the bound; the main lane's last files start when the quota lane ends", () => {
    const quota = { account: "quota", key: "quota", lane: "quota" };
    const entries = [
      ...many(121, { ...quota, check: "suites/functional/list.test.ts::a" }),
      ...many(30, { lane: "main", check: "suites/functional/get.test.ts::a" }),
      ...many(1, { lane: "main", check: "suites/functional/isolation.test.ts::a" }),
      ...many(61, { lane: "other", account: "other", key: "otherAccount", check: "suites/functional/errors.test.ts::a" }),
      entry({ check: "run.cleanup", endpoint: "listAgents" }),
    ];
    // the isolation check's file declared it creates agents in another account: it waits for the quota lane
    const needsOf = (file: string) => (file.includes("isolation") ? { createsAgentsInOtherAccount: true } : {});
    const lanes = scheduleLanes(entries, { ...limits, needsOf });
    expect(lanes.map((l) => [l.lane, l.seconds])).toEqual([
      // 121 on a tier of 60: its third window
      ["quota", 120],
      // 31 requests, one window; the list isolation check waits for the quota lane's end
      ["main", 120],
      ["other", 60],
      // the sweep, after every lane
      ["after the lanes", 120],
    ]);
    expect(planRun(entries, { ...limits, needsOf }, "test").lowerBoundSeconds).toBe(120);
  });

  test("a calibration's workers interleave a lane's files; the run sends them file after file", () => {
    // file a drains the tier while file b's requests were interleaved: the run sends b after a
    const a = drain("suites/functional/a.test.ts::drain", 60, { lane: "main" });
    const b = many(30, { lane: "main", check: "suites/functional/b.test.ts::reads" });
    const interleaved = a.flatMap((entry, i) => (i < b.length ? [entry, b[i]!] : [entry]));
    // b's 30 wait for the refill once, after a's drain, not once each
    expect(scheduleLanes(interleaved, limits)).toEqual([{ lane: "main", seconds: 60, waits: { "Get on key main#0": 1 } }]);
  });

  test("a request counted nowhere takes no room; only a refusal by an empty bucket makes a drain", () => {
    // 401s, and 429s of the cap on messages in flight (their buckets have room)
    const refusedElsewhere = [
      ...many(50, { counted: false, check: "f::auth" }),
      ...many(50, { counted: false, check: "f::cap" }),
    ];
    const entries = [...many(60, {}), ...refusedElsewhere, ...many(60, {})];
    expect(scheduleLanes(entries, limits)[0]?.seconds).toBe(60);
    // a 429 from the Create bucket (size 10) empties Create, not the tier or Get
    const create = [
      ...drain("f::creates", 3, { endpoint: "createAgent" }, 10),
      entry({ check: "f::get" }),
      entry({ check: "f::create", endpoint: "createAgent" }),
    ];
    expect(scheduleLanes(create, limits)[0]).toEqual({ lane: "run", seconds: 60, waits: { "Create on key main#0": 1 } });
  });
});
