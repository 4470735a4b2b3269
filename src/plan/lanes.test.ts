import { describe, expect, test } from "vitest";
import { RATE_LIMITS } from "../contract/index.js";
import type { HarnessTarget } from "../target/harness-target.js";
import {
  type FileNeeds,
  GUEST_SHARE,
  type Lane,
  laneFileOrder,
  laneOfNeeds,
  lanesOf,
  laneTarget,
  planShares,
  quotaLaneDoneFile,
  usesAccountLanes,
} from "./lanes.js";

/** One file of each kind: one needing a read-only key, one sending messages, one sharing an account well. */
const EVERY_LANE: FileNeeds[] = [{ keys: ["readOnly"] }, { sendsMessages: true }, {}];
const ALL_LANES = ["main", "other", "quota"] as const;

const deployment: HarnessTarget = {
  kind: "external",
  baseUrl: "http://127.0.0.1:1/v1",
  keys: { main: "k-main", mainKeys: ["k-main", "k-main2"], readOnly: "k-ro", otherAccount: "k-other", quota: "k-quota" },
  windowSeconds: 60,
  messageTimeoutSeconds: 30,
  tierLimit: 60,
  referenceFaults: true,
  idField: "id",
  runPrefix: "ah-t-",
  ledgerFile: "/tmp/ledger.jsonl",
  seed: 1,
};

describe("account lanes", () => {
  test("a deployment with the other account's and the quota account's keys runs in lanes: three with a tier, two without", () => {
    expect(usesAccountLanes(deployment)).toBe(true);
    expect(lanesOf(deployment, EVERY_LANE)).toEqual(["main", "other", "quota"]);
    // the quota lane keeps to the tier less the main lane's part: it needs the tier, and one well above that part
    const { tierLimit: _t, ...noTier } = deployment;
    expect(lanesOf(noTier, EVERY_LANE)).toEqual(["main", "other"]);
    expect(lanesOf({ ...deployment, tierLimit: 2 * GUEST_SHARE.tier }, EVERY_LANE)).toEqual(["main", "other"]);
    const { quota: _q, ...noQuota } = deployment.keys;
    expect(usesAccountLanes({ ...deployment, keys: noQuota })).toBe(false);
    expect(lanesOf({ ...deployment, keys: noQuota }, EVERY_LANE)).toBeUndefined();
    const { otherAccount: _o, ...noOther } = deployment.keys;
    expect(usesAccountLanes({ ...deployment, keys: noOther })).toBe(false);
    // a target the harness starts has accounts per worker: lanes only for a calibration run that asks
    expect(usesAccountLanes({ ...deployment, kind: "embedded" })).toBe(false);
    expect(usesAccountLanes({ ...deployment, kind: "embedded", accountLanes: true })).toBe(true);
  });

  test("each lane's checks see its account as their main one; the main lane's, the quota account as another", () => {
    const other = laneTarget(deployment, "other", ALL_LANES);
    expect(other.keys).toEqual({ main: "k-other", mainKeys: ["k-other"] });
    const quota = laneTarget(deployment, "quota", ALL_LANES);
    expect(quota.keys).toEqual({ main: "k-quota", mainKeys: ["k-quota"] });
    const main = laneTarget(deployment, "main", ALL_LANES);
    expect(main.keys).toMatchObject({ main: "k-main", readOnly: "k-ro", otherAccount: "k-quota", quota: "k-quota" });
    // footprints, pacing and curl lines still name each key by what it is
    expect(other.keyLabels?.["k-other"]).toEqual({ role: "otherAccount", account: "other", footprint: "otherAccount" });
    expect(quota.keyLabels?.["k-quota"]).toEqual({ role: "quota", account: "quota", footprint: "quota" });
    expect(main.keyLabels?.["k-quota"]).toEqual({ role: "quota", account: "quota", footprint: "quota" });
    expect(main.keyLabels?.["k-main2"]).toEqual({ role: "main", account: "main", footprint: "main#1" });
    expect(main.keyLabels?.["k-ro"]).toEqual({ role: "readOnly", account: "main", footprint: "readOnly" });
  });

  test("the main and quota lanes share the quota account: the quota lane hosts it, the main lane keeps to its part and hands off", () => {
    const main = laneTarget(deployment, "main", ALL_LANES);
    const quota = laneTarget(deployment, "quota", ALL_LANES);
    expect(main.accountShares).toEqual({ quota: { guest: GUEST_SHARE, side: "guest" } });
    expect(quota.accountShares).toEqual({ quota: { guest: GUEST_SHARE, side: "host" } });
    expect(laneTarget(deployment, "other", ALL_LANES).accountShares).toBeUndefined();
    // the main lane's last files wait for the quota lane's end; no other lane waits
    expect(main.afterQuotaLane).toBe(quotaLaneDoneFile(deployment));
    expect(quota.afterQuotaLane).toBeUndefined();
    // the plan models the same shares
    expect(planShares(ALL_LANES)).toEqual({ quota: { host: "quota", guest: GUEST_SHARE } });
    expect(planShares(["main", "other"])).toBeUndefined();
    expect(laneTarget(deployment, "main", ["main", "other"]).accountShares).toBeUndefined();
    // a quota lane with no main lane beside it shares nothing
    expect(planShares(["other", "quota"])).toBeUndefined();
    expect(laneTarget(deployment, "quota", ["other", "quota"]).accountShares).toBeUndefined();
  });

  test("a calibration run's key sets are shared out between the lanes: each its own, so nothing is shared", () => {
    const pool = [1, 2, 3, 4, 5].map((i) => ({
      ...deployment.keys,
      main: `m${i}`,
      mainKeys: [`m${i}`],
      otherAccount: `o${i}`,
      quota: `q${i}`,
    }));
    const target = { ...deployment, kind: "embedded" as const, accountLanes: true, keyPool: pool };
    const lanes = lanesOf(target, EVERY_LANE)!;
    expect(laneTarget(target, "main", lanes).keyPool?.map((k) => k.main)).toEqual(["m1", "m2"]);
    expect(laneTarget(target, "other", lanes).keyPool?.map((k) => k.main)).toEqual(["o3", "o4"]);
    expect(laneTarget(target, "quota", lanes).keyPool?.map((k) => k.main)).toEqual(["q5"]);
    expect(laneTarget(target, "main", lanes).keyPool?.map((k) => k.otherAccount)).toEqual(["q1", "q2"]);
    expect(laneTarget(target, "main", lanes).accountShares).toBeUndefined();
    expect(laneTarget(target, "main", lanes).afterQuotaLane).toBeUndefined();
    // without a tier, two lanes as before
    const { tierLimit: _t, ...noTier } = target;
    expect(laneTarget(noTier, "other", lanesOf(noTier, EVERY_LANE)!).keyPool?.map((k) => k.main)).toEqual(["o4", "o5"]);
  });

  test("a file's lane follows from what it declared: extra keys → main; a main key alone → other; and shares an account well → quota", () => {
    expect(laneOfNeeds({ keys: ["readOnly"] })).toBe("main");
    expect(laneOfNeeds({ keys: ["load"], sendsMessages: true })).toBe("main");
    // a file that declared nothing gets every key
    expect(laneOfNeeds(undefined)).toBe("main");
    expect(laneOfNeeds({})).toBe("quota");
    // without a quota lane its files run in the other lane
    expect(laneOfNeeds({}, ["main", "other"])).toBe("other");
    for (const needs of [
      { sendsMessages: true },
      { sendsUnpaced: true },
      { emptiesBuckets: true },
      { readsRemainingAcrossAnswers: true },
    ])
      expect(laneOfNeeds(needs), JSON.stringify(needs)).toBe("other");
  });

  test("a lane no file of the run needs does not start, and no share is kept for it", () => {
    // the property suites alone send messages with the main key: the other lane only
    expect(lanesOf(deployment, [{ sendsMessages: true }, { sendsMessages: true }])).toEqual(["other"]);
    expect(lanesOf(deployment, [{ keys: ["otherAccount"] }, {}])).toEqual(["main", "quota"]);
    expect(lanesOf(deployment, [])).toEqual([]);
  });

  test("the main lane's part of the quota account comes from the contract's buckets: a third of the smallest, and their sum of the tier", () => {
    const buckets = Object.values(RATE_LIMITS.perKeyEndpoint);
    expect(GUEST_SHARE.endpoint).toBe(Math.floor(Math.min(...buckets) / 3));
    expect(GUEST_SHARE.tier).toBe(GUEST_SHARE.endpoint * buckets.length);
    // the quota lane keeps most of a standard tier, and a lane of its own there
    expect(GUEST_SHARE.tier).toBeLessThan(RATE_LIMITS.tiers.standard / 2);
  });
});

test("a lane's files run by name, those after the quota lane last, the quota spender last of all", () => {
  const needs: Record<string, FileNeeds> = {
    "/r/suites/functional/z-spends.test.ts": { keys: ["quota"], spendsQuota: true },
    "/r/suites/functional/y-isolation.test.ts": { keys: ["otherAccount"], createsAgentsInOtherAccount: true },
    "/r/suites/functional/b.test.ts": {},
    "/r/suites/functional/a.test.ts": { keys: ["readOnly"] },
  };
  const files = Object.keys(needs);
  expect([...files].sort(laneFileOrder((f) => needs[f])).map((f) => f.split("/").at(-1))).toEqual([
    "a.test.ts",
    "b.test.ts",
    "y-isolation.test.ts",
    "z-spends.test.ts",
  ]);
});

/**
 * Moving a check between files changes neither what runs nor where: a file's lane follows from
 * what it declares, and a check uses only the keys its file declared (suites/support/harness.ts
 * stops one that does not). Two layouts of the same checks, a read-only check moved from one file
 * to another with its need: in both, every check's lane has every key it needs.
 */
describe("a check moved between files", () => {
  interface Check {
    name: string;
    needs: FileNeeds;
  }
  const readOnlyCheck: Check = { name: "403 for a read-only key", needs: { keys: ["readOnly"] } };
  const messageCheck: Check = { name: "a message is answered", needs: { sendsMessages: true } };
  const listCheck: Check = { name: "a list is ordered", needs: {} };
  /** a file's declaration: the union of its checks' needs */
  const declare = (checks: Check[]): FileNeeds => {
    const keys = [...new Set(checks.flatMap((c) => c.needs.keys ?? []))];
    return {
      ...(keys.length ? { keys } : {}),
      ...(checks.some((c) => c.needs.sendsMessages) ? { sendsMessages: true } : {}),
    };
  };
  /** each check's name → whether its lane's keys hold every key it needs */
  const runs = (layout: Check[][]) => {
    const files = layout.map(declare);
    const lanes = lanesOf(deployment, files)!;
    return Object.fromEntries(
      layout.flatMap((checks, i) => {
        const lane: Lane = laneOfNeeds(files[i], lanes);
        const keys = laneTarget(deployment, lane, lanes).keys;
        return checks.map((c) => [c.name, (c.needs.keys ?? []).every((role) => keys[role] !== undefined)]);
      }),
    );
  };

  test("the same checks run, whichever file holds them", () => {
    const before = runs([[readOnlyCheck, messageCheck], [listCheck]]);
    const moved = runs([[messageCheck], [listCheck, readOnlyCheck]]);
    const together = runs([[readOnlyCheck, messageCheck, listCheck]]);
    const all = { [readOnlyCheck.name]: true, [messageCheck.name]: true, [listCheck.name]: true };
    expect(before).toEqual(all);
    expect(moved).toEqual(all);
    expect(together).toEqual(all);
  });
});
