import { readdirSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { parseVerifyConfig } from "../cli/config.js";
import { RATE_LIMITS } from "../contract/index.js";
import { resolveTarget } from "../run/lifecycle.js";
import { SCENARIOS } from "./scenarios.js";

const RUN = { runPrefix: "ah-test-", ledgerFile: "/dev/null", seed: 1 };
const deployment = async (...flags: string[]) =>
  (await resolveTarget(parseVerifyConfig(["--base-url", "http://127.0.0.1:9/v1", "--api-key", "main", ...flags], {}), RUN))
    .target;

describe("every load scenario can run on a deployment", () => {
  test("with the main key alone, each skipped scenario names the flag that enables it", async () => {
    const target = await deployment();
    const why = Object.fromEntries(SCENARIOS.map((s) => [s.id, s.unavailable?.(target)]));
    expect(why["bucket-getAgent"]).toMatch(/--load-key .* or --tier ≥ 180/);
    expect(why.throughput).toMatch(/--load-key/);
    expect(why["tier-mixed"]).toBe("needs --tier-burst-key and --tier-burst-tier");
    expect(why["concurrency-bursts"]).toMatch(/--reference-faults/);
    expect(why["quota-headers"]).toMatch(/--quota-key and --reference-faults/);
    // a few dozen ordinary requests: within a standard tier, with the main key alone
    expect(why["linearizable-history"]).toBeUndefined();
    for (const [id, reason] of Object.entries(why)) if (id !== "linearizable-history") expect(reason, id).toMatch(/--[a-z-]+/);
  });

  test("with a service owner's keys at a standard tier, each skipped scenario names the flag that enables it", async () => {
    const target = await deployment(
      ...["--read-only-key", "ro", "--other-account-key", "other", "--quota-key", "quota"],
      ...["--tier", String(RATE_LIMITS.tiers.standard), "--reference-faults"],
    );
    const why = Object.fromEntries(SCENARIOS.map((s) => [s.id, s.unavailable?.(target)]));
    // streams-at-budget sizes its waves to the tier: it runs
    expect(why["streams-at-budget"]).toBeUndefined();
    for (const [id, reason] of Object.entries(why)) if (reason !== undefined) expect(reason, id).toMatch(/--[a-z-]+/);
    // a tier too small for the streams and two waves in one window: the load account enables it
    const small = await deployment("--tier", "10", "--reference-faults");
    expect(SCENARIOS.find((s) => s.id === "streams-at-budget")?.unavailable?.(small)).toMatch(/--load-key with --load-tier/);
  });

  test("with the load scenarios' keys and --reference-faults, none is skipped", async () => {
    const target = await deployment(
      ...["--load-key", "load", "--load-tier", "100000", "--tier-burst-key", "burst", "--tier-burst-tier", "100"],
      ...["--quota-key", "quota", "--reference-faults"],
    );
    // capacity drives the tenants of --keys-file, a load option: the target's keys never enable it
    const skipped = SCENARIOS.filter((s) => s.unavailable?.(target)).map((s) => [s.id, s.unavailable?.(target)]);
    expect(skipped).toEqual([["capacity", expect.stringMatching(/--keys-file/)]]);
  });

  test("a load account whose tier would mask a bucket, or a tier-burst tier above the bursts, is named", async () => {
    const target = await deployment(
      "--load-key",
      "load",
      "--load-tier",
      "100",
      "--tier-burst-key",
      "b",
      "--tier-burst-tier",
      "500",
    );
    expect(SCENARIOS.find((s) => s.id === "bucket-getAgent")?.unavailable?.(target)).toMatch(/tier of at least 180/);
    expect(SCENARIOS.find((s) => s.id === "tier-mixed")?.unavailable?.(target)).toMatch(/--tier-burst-tier below/);
  });
});

describe("quick load scenarios", () => {
  test("each quick group has its file in suites/load, and every other scenario runs from long.test.ts", () => {
    const files = readdirSync(new URL("../../suites/load/", import.meta.url)).filter((f) => f.endsWith(".test.ts"));
    const groups = [...new Set(SCENARIOS.flatMap((s) => (s.quickGroup === undefined ? [] : [s.quickGroup])))].sort();
    expect(files.sort()).toEqual([...groups.map((g) => `quick-${g}.test.ts`), "long.test.ts"].sort());
    // the scenarios that wait out a message budget or profile throughput stay out of the default run
    expect(SCENARIOS.filter((s) => s.quickGroup === undefined && !s.tenants).map((s) => s.id)).toEqual([
      "throughput",
      "streams-at-budget",
    ]);
    // and the tenants' drive runs from `agent-harness load --keys-file` only
    expect(SCENARIOS.filter((s) => s.tenants).map((s) => s.id)).toEqual(["capacity"]);
  });
});
