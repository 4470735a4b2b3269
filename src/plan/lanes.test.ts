import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import type { HarnessTarget } from "../target/harness-target.js";
import {
  GUEST_SHARE,
  laneFileOrder,
  laneOfFile,
  lanesOf,
  laneTarget,
  OTHER_LANE_FILES,
  planShares,
  QUOTA_LANE_FILES,
  quotaLaneDoneFile,
  usesAccountLanes,
} from "./lanes.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

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
    expect(lanesOf(deployment)).toEqual(["main", "other", "quota"]);
    // the quota lane keeps to the tier less the main lane's part: it needs the tier, and one well above that part
    const { tierLimit: _t, ...noTier } = deployment;
    expect(lanesOf(noTier)).toEqual(["main", "other"]);
    expect(lanesOf({ ...deployment, tierLimit: 2 * GUEST_SHARE.tier })).toEqual(["main", "other"]);
    const { quota: _q, ...noQuota } = deployment.keys;
    expect(usesAccountLanes({ ...deployment, keys: noQuota })).toBe(false);
    expect(lanesOf({ ...deployment, keys: noQuota })).toBeUndefined();
    const { otherAccount: _o, ...noOther } = deployment.keys;
    expect(usesAccountLanes({ ...deployment, keys: noOther })).toBe(false);
    // a target the harness starts has accounts per worker: lanes only for a calibration run that asks
    expect(usesAccountLanes({ ...deployment, kind: "embedded" })).toBe(false);
    expect(usesAccountLanes({ ...deployment, kind: "embedded", accountLanes: true })).toBe(true);
  });

  test("each lane's checks see its account as their main one; the main lane's, the quota account as another", () => {
    const other = laneTarget(deployment, "other");
    expect(other.keys).toEqual({ main: "k-other", mainKeys: ["k-other"] });
    const quota = laneTarget(deployment, "quota");
    expect(quota.keys).toEqual({ main: "k-quota", mainKeys: ["k-quota"] });
    const main = laneTarget(deployment, "main");
    expect(main.keys).toMatchObject({ main: "k-main", readOnly: "k-ro", otherAccount: "k-quota", quota: "k-quota" });
    // footprints, pacing and curl lines still name each key by what it is
    expect(other.keyLabels?.["k-other"]).toEqual({ role: "otherAccount", account: "other", footprint: "otherAccount" });
    expect(quota.keyLabels?.["k-quota"]).toEqual({ role: "quota", account: "quota", footprint: "quota" });
    expect(main.keyLabels?.["k-quota"]).toEqual({ role: "quota", account: "quota", footprint: "quota" });
    expect(main.keyLabels?.["k-main2"]).toEqual({ role: "main", account: "main", footprint: "main#1" });
    expect(main.keyLabels?.["k-ro"]).toEqual({ role: "readOnly", account: "main", footprint: "readOnly" });
  });

  test("the main and quota lanes share the quota account: the quota lane hosts it, the main lane keeps to its part and hands off", () => {
    const main = laneTarget(deployment, "main");
    const quota = laneTarget(deployment, "quota");
    expect(main.accountShares).toEqual({ quota: { guest: GUEST_SHARE, side: "guest" } });
    expect(quota.accountShares).toEqual({ quota: { guest: GUEST_SHARE, side: "host" } });
    expect(laneTarget(deployment, "other").accountShares).toBeUndefined();
    // the main lane's last files wait for the quota lane's end; no other lane waits
    expect(main.afterQuotaLane).toBe(quotaLaneDoneFile(deployment));
    expect(quota.afterQuotaLane).toBeUndefined();
    // the plan models the same shares
    expect(planShares(deployment)).toEqual({ quota: { host: "quota", guest: GUEST_SHARE } });
    const { tierLimit: _t, ...noTier } = deployment;
    expect(planShares(noTier)).toBeUndefined();
    expect(laneTarget(noTier, "main").accountShares).toBeUndefined();
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
    expect(laneTarget(target, "main").keyPool?.map((k) => k.main)).toEqual(["m1", "m2"]);
    expect(laneTarget(target, "other").keyPool?.map((k) => k.main)).toEqual(["o3", "o4"]);
    expect(laneTarget(target, "quota").keyPool?.map((k) => k.main)).toEqual(["q5"]);
    expect(laneTarget(target, "main").keyPool?.map((k) => k.otherAccount)).toEqual(["q1", "q2"]);
    expect(laneTarget(target, "main").accountShares).toBeUndefined();
    expect(laneTarget(target, "main").afterQuotaLane).toBeUndefined();
    // without a tier, two lanes as before
    const { tierLimit: _t, ...noTier } = target;
    expect(laneTarget(noTier, "other").keyPool?.map((k) => k.main)).toEqual(["o4", "o5"]);
  });

  test("the quota lane's files run in the other lane when there is no quota lane", () => {
    expect(laneOfFile("/r/suites/functional/update.test.ts")).toBe("quota");
    expect(laneOfFile("/r/suites/functional/update.test.ts", ["main", "other"])).toBe("other");
    expect(laneOfFile("/r/suites/functional/errors.test.ts")).toBe("other");
    expect(laneOfFile("/r/suites/functional/auth.test.ts")).toBe("main");
  });

  const sourceOf = (file: string) => {
    const path = [".ts", ".js"].map((ext) => `${ROOT}suites/${file}${ext}`).find(existsSync);
    expect(path, `suites/${file} exists`).toBeDefined();
    return { path: path!, source: readFileSync(path!, "utf8") };
  };

  test.for([...OTHER_LANE_FILES, ...QUOTA_LANE_FILES])("suites/%s needs no key but one with all four permissions", (file) => {
    const { path, source } = sourceOf(file);
    expect(laneOfFile(path)).not.toBe("main");
    // in the other or quota lane such a check would be skipped as if the key had not been given
    expect(
      source.match(/readOnlyApi|otherApi|quotaApi|agentlessApi|keys\.(readOnly|otherAccount|quota|agentless)\b/g) ?? [],
    ).toEqual([]);
  });

  test.for(
    QUOTA_LANE_FILES,
  )("suites/%s sends no message, no request unpaced, and compares no X-RateLimit-Remaining across answers", (file) => {
    const { source } = sourceOf(file);
    // the quota account's quota is the quota check's; the main lane uses the account meanwhile
    expect(source.match(/sendMessage|streamMessage|\/messages|pace: false|remaining|waitForRefill/gi) ?? []).toEqual([]);
  });
});

test("a lane's files run by name, those after the quota lane last, the quota spender last of all", () => {
  const files = [
    "/r/suites/functional/limits-account.test.ts",
    "/r/suites/functional/list-isolation.test.ts",
    "/r/suites/functional/list.test.ts",
    "/r/suites/functional/auth.test.ts",
  ];
  expect([...files].sort(laneFileOrder).map((f) => f.split("/").at(-1))).toEqual([
    "auth.test.ts",
    "list.test.ts",
    "list-isolation.test.ts",
    "limits-account.test.ts",
  ]);
});
