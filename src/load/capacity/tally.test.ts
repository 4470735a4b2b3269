import { describe, expect, test } from "vitest";
import type { FloodShape } from "./floods.js";
import { type CapacitySettings, type FloodFigures, withStormControl } from "./tally.js";

const settings = (where: NonNullable<CapacitySettings["service"]>["where"]): CapacitySettings => ({
  profile: "noisy-neighbour",
  share: 0.8,
  durationSeconds: 12,
  rampSeconds: 1,
  intervalSeconds: 1,
  tenants: 5,
  keys: 10,
  offeredPerSecond: 120,
  flooder: "acct_tenant_0",
  service: { where, cores: 2 },
});

const SHARED =
  "the storm's generator shared the service's 2 cores: the others' p99 over its allowance says nothing of the service (a generator on a machine of its own, --base-url, judges it)";

/** A storm at 1,490 a second whose others' p99 was over its allowance of 40 ms on shared cores: no verdict on it. */
const storm = (shape: FloodShape, p50Ms: number, achieved = 1490): FloodFigures => ({
  flood: { shape, intended: 1500, achieved, unit: "req/s", refusedPerSecond: achieved, seconds: 0.9, sent: achieved },
  p99Ms: 320,
  p50Ms,
  count: 200,
  sent: 200,
  lateShare: 0,
  lagMaxMs: 5,
  refused: 0,
  unexpected: 0,
  errors: 0,
  errorRate: 0,
  refusedPerSecond: achieved,
  reached: false,
  unreachedBecause: SHARED,
  allowedP99Ms: 40,
  passed: false,
});

/** PROFILE §7 limits.tier: one account's excess is refused without harming the others (noisy-neighbour's storms). */
describe("the two storms as each other's control on shared cores", () => {
  test("the others' median over the allowance under one storm, within under the other at the same rate: a failure of that storm", () => {
    const [refusals, unknown] = withStormControl(
      [storm("refusal-storm", 303), storm("unknown-key-storm", 3.6)],
      settings("a process of its own"),
    );
    expect(refusals).toMatchObject({ reached: true, passed: false, medianAgainst: { shape: "unknown-key-storm", p50Ms: 3.6 } });
    expect(refusals?.unreachedBecause).toBeUndefined();
    expect(unknown).toMatchObject({ reached: false, unreachedBecause: SHARED });
  });

  test("no control (one storm alone, a control slower than the allowance too, one that sent less) or a median under five times the control's: still no verdict", () => {
    for (const floods of [
      [storm("refusal-storm", 303)],
      [storm("refusal-storm", 303), storm("unknown-key-storm", 120)],
      [storm("refusal-storm", 303), storm("unknown-key-storm", 3.6, 900)],
      // over the allowance, but not five times the control's: noise between two segments
      [storm("refusal-storm", 130), storm("unknown-key-storm", 30)],
    ])
      expect(withStormControl(floods, settings("this process")).map((f) => f.reached)).toEqual(floods.map(() => false));
  });

  test("a median within the allowance under both: no verdict, as the p99 said nothing", () => {
    const floods = [storm("refusal-storm", 30), storm("unknown-key-storm", 3.6)];
    expect(withStormControl(floods, settings("a process of its own"))).toEqual(floods);
  });

  test("a service elsewhere has its p99 judged: the control is not needed", () => {
    const floods = [storm("refusal-storm", 303), storm("unknown-key-storm", 3.6)];
    expect(withStormControl(floods, settings("elsewhere"))).toEqual(floods);
  });
});
