import { describe, expect, test } from "vitest";
import { RATE_LIMITS } from "../contract/index.js";
import { type FootprintEntry, keyIndexFor } from "./footprint.js";
import { formatPlan, planRun, secondsLeft, withActual } from "./plan.js";

const entry = (over: Partial<FootprintEntry>): FootprintEntry => ({
  check: "suites/functional/x.test.ts::a",
  key: "main#0",
  account: "main",
  endpoint: "createAgent",
  counted: true,
  ...over,
});

const many = (n: number, over: Partial<FootprintEntry>) => Array.from({ length: n }, () => entry(over));

describe("the run plan", () => {
  test("the busiest bucket sets the bound: ⌈requests / size⌉ windows, (windows − 1) × W seconds", () => {
    const creates = RATE_LIMITS.perKeyEndpoint.createAgent;
    const entries = [...many(creates * 3 + 1, {}), ...many(5, { endpoint: "listAgents" })];
    const plan = planRun(entries, { windowSeconds: 60, mainKeys: 1 }, "test");
    expect(plan.lowerBoundWindows).toBe(4);
    expect(plan.lowerBoundSeconds).toBe(180);
    expect(plan.binding).toBe("Create on key main#0");
    expect(plan.requestsByBucket["Create on key main#0"]).toEqual({ requests: creates * 3 + 1, size: creates, windows: 4 });
    // no tier given: its bucket is listed without a size and left out of the bound
    expect(plan.requestsByBucket["tier of the main account"]).toEqual({ requests: creates * 3 + 6, size: null, windows: null });
    expect(formatPlan(plan)).toContain("needs ≥ 4 windows: Create on key main#0");
  });

  test("the tier counts every endpoint of the account; on a tie it is named", () => {
    const entries = [...many(60, { endpoint: "listAgents" }), ...many(60, { endpoint: "getAgent" })];
    const plan = planRun(entries, { windowSeconds: 60, tierLimit: 60, mainKeys: 1 }, "test");
    expect(plan.binding).toBe("tier of the main account");
    expect(plan.lowerBoundWindows).toBe(2);
  });

  test("per-key buckets are per key, Send Message per agent; a request counted nowhere is left out", () => {
    const entries = [
      ...many(10, { key: "main#0" }),
      ...many(10, { key: "main#1" }),
      ...many(61, { endpoint: "sendMessage", agent: "agt_a" }),
      ...many(50, { endpoint: "sendMessage", agent: "agt_b", key: "main#1" }),
      ...many(40, { counted: false }),
    ];
    const plan = planRun(entries, { windowSeconds: 10, tierLimit: 1000, mainKeys: 2 }, "test");
    expect(plan.requestsByBucket["Create on key main#0"]?.windows).toBe(1);
    expect(plan.requestsByBucket["Send Message, busiest agent (main account)"]).toEqual({ requests: 61, size: 60, windows: 2 });
    expect(plan.binding).toBe("Send Message to one agent");
    expect(plan.lowerBoundSeconds).toBe(10);
    expect(plan.countedRequests).toBe(entries.length - 40);
  });

  test("an account two lanes share: each lane's requests count against its share of the tier and of the key's buckets", () => {
    const shares = { quota: { host: "quota", guest: { tier: 10, endpoint: 3 } } };
    const quota = { account: "quota", key: "quota", endpoint: "listAgents" as const };
    const entries = [
      ...many(101, { ...quota, lane: "quota" }),
      ...many(12, { ...quota, lane: "main" }),
      ...many(130, { lane: "main", endpoint: "getAgent" }),
    ];
    const plan = planRun(entries, { windowSeconds: 60, tierLimit: 60, mainKeys: 1, shares }, "test");
    // 101 at 50 (60 less the main lane's 10): 3 windows, where the whole tier would say 2
    expect(plan.requestsByBucket["tier of the quota account, the quota lane's share"]).toEqual({
      requests: 101,
      size: 50,
      windows: 3,
    });
    expect(plan.requestsByBucket["tier of the quota account, the main lane's share"]).toEqual({
      requests: 12,
      size: 10,
      windows: 2,
    });
    expect(plan.requestsByBucket["List on key quota, the main lane's share"]).toEqual({ requests: 12, size: 3, windows: 4 });
    expect(plan.requestsByBucket["tier of the main account"]?.windows).toBe(3);
    expect(plan.binding).toBe("List on key quota, the main lane's share");
    // where the bound comes from, account by account
    expect(formatPlan(plan)).toContain("  quota account, the quota lane's share: 101 requests, 50 per window → 3 windows");
  });

  test("the time left is the bound of the checks not yet done; the ratio is actual / bound", () => {
    const entries = [...many(30, { check: "f::one" }), ...many(30, { check: "f::two" }), ...many(5, { check: "f::(setup)" })];
    const limits = { windowSeconds: 60, mainKeys: 1 };
    expect(secondsLeft(entries, new Set(), limits)).toBe(5 * 60);
    expect(secondsLeft(entries, new Set(["f::one"]), limits)).toBe(2 * 60);
    expect(secondsLeft(entries, new Set(["f::one", "f::two"]), limits)).toBe(0);
    const plan = planRun(entries, limits, "test");
    expect(plan.checks).toBe(2);
    expect(withActual(plan, plan.lowerBoundSeconds * 1.2).ratio).toBe(1.2);
  });
});

describe("the footprint", () => {
  test("a check takes the same key in every run, and the keys are all used", () => {
    const names = Array.from({ length: 60 }, (_, i) => `check ${i}`);
    expect(names.map((n) => keyIndexFor(n, 3))).toEqual(names.map((n) => keyIndexFor(n, 3)));
    expect(new Set(names.map((n) => keyIndexFor(n, 3)))).toEqual(new Set([0, 1, 2]));
    expect(keyIndexFor("anything", 1)).toBe(0);
  });
});
