import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import type { HarnessTarget } from "../target/harness-target.js";
import { laneFileOrder, laneOfFile, laneTarget, OTHER_LANE_FILES, usesAccountLanes } from "./lanes.js";

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
  test("a deployment with the other account's and the quota account's keys runs in two lanes; without either, in one", () => {
    expect(usesAccountLanes(deployment)).toBe(true);
    const { quota: _q, ...noQuota } = deployment.keys;
    expect(usesAccountLanes({ ...deployment, keys: noQuota })).toBe(false);
    const { otherAccount: _o, ...noOther } = deployment.keys;
    expect(usesAccountLanes({ ...deployment, keys: noOther })).toBe(false);
    // a target the harness starts has accounts per worker: lanes only for a calibration run that asks
    expect(usesAccountLanes({ ...deployment, kind: "embedded" })).toBe(false);
    expect(usesAccountLanes({ ...deployment, kind: "embedded", accountLanes: true })).toBe(true);
  });

  test("the other lane's checks see the other account as their main one; the main lane's, the quota account as another", () => {
    const other = laneTarget(deployment, "other");
    expect(other.keys).toEqual({ main: "k-other", mainKeys: ["k-other"] });
    const main = laneTarget(deployment, "main");
    expect(main.keys).toMatchObject({ main: "k-main", readOnly: "k-ro", otherAccount: "k-quota", quota: "k-quota" });
    // footprints, pacing and curl lines still name each key by what it is
    expect(other.keyLabels?.["k-other"]).toEqual({ role: "otherAccount", account: "other", footprint: "otherAccount" });
    expect(main.keyLabels?.["k-quota"]).toEqual({ role: "quota", account: "quota", footprint: "quota" });
    expect(main.keyLabels?.["k-main2"]).toEqual({ role: "main", account: "main", footprint: "main#1" });
    expect(main.keyLabels?.["k-ro"]).toEqual({ role: "readOnly", account: "main", footprint: "readOnly" });
  });

  test("a calibration run's key sets are shared out between the lanes", () => {
    const pool = [1, 2, 3, 4, 5].map((i) => ({ ...deployment.keys, main: `m${i}`, mainKeys: [`m${i}`], otherAccount: `o${i}` }));
    const target = { ...deployment, kind: "embedded" as const, accountLanes: true, keyPool: pool };
    expect(laneTarget(target, "main").keyPool?.map((k) => k.main)).toEqual(["m1", "m2", "m3"]);
    expect(laneTarget(target, "other").keyPool?.map((k) => k.main)).toEqual(["o4", "o5"]);
  });

  test.for(OTHER_LANE_FILES)("suites/%s needs no key but one with all four permissions", (file) => {
    const path = [".ts", ".js"].map((ext) => `${ROOT}suites/${file}${ext}`).find(existsSync);
    expect(path, `suites/${file} exists`).toBeDefined();
    expect(laneOfFile(path!)).toBe("other");
    // in the other lane such a check would be skipped as if the key had not been given
    const source = readFileSync(path!, "utf8");
    expect(
      source.match(/readOnlyApi|otherApi|quotaApi|agentlessApi|keys\.(readOnly|otherAccount|quota|agentless)\b/g) ?? [],
    ).toEqual([]);
  });
});

test("a lane's files run by name, the quota spender last (the quota account stands in as another account before)", () => {
  const files = [
    "/r/suites/functional/limits-account.test.ts",
    "/r/suites/functional/list.test.ts",
    "/r/suites/functional/auth.test.ts",
  ];
  expect([...files].sort(laneFileOrder).map((f) => f.split("/").at(-1))).toEqual([
    "auth.test.ts",
    "list.test.ts",
    "limits-account.test.ts",
  ]);
});
