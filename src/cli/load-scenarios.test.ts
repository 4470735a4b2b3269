import { describe, expect, test } from "vitest";
import { RATE_LIMITS } from "../contract/index.js";
import { SCENARIOS } from "../load/scenarios.js";
import { resolveTarget } from "../run/lifecycle.js";
import { parseVerifyConfig } from "./config.js";

/** The flags a person gives decide which load scenarios can run on a deployment, and a skip names the flag. */
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
    expect(why["quota-headers"]).toBe("needs --quota-key with --reference-faults");
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
