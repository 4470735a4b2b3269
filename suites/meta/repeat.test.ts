import { expect, test } from "vitest";
import type { CheckResult } from "../../src/report/index.js";
import { atMost, verify } from "./verify-run.js";

/**
 * Speed never at the cost of correctness. The embedded functional suite, run five
 * times in a row with different seeds (parallel workers, short windows and budgets), gives the
 * same verdict every time: no check that passes in one run and fails in another.
 */
const SEEDS = [101, 202, 303, 404, 505];
/**
 * Runs at a time: a functional run waits on its windows more than it computes (0.75 of a core
 * over the five one after another in CI), so two share two cores and still see their windows.
 * Three at once (eighteen workers) starved the §7 check that floods a tier's worth of 429s at the
 * emptied Delete bucket on a slower machine: its flood of 60 took 2.9 s against W = 2 s, three
 * times, and the check could not judge (a precheck of 2026-11-30)
 */
const AT_ONCE = 2;

test("five embedded runs with different seeds: the same checks, all passed, none flaky", { timeout: 900_000 }, async () => {
  const outcomes = new Map<string, Map<number, CheckResult["status"]>>();
  const counts: number[] = [];
  // a run starts as soon as one of the three ends, not in rounds that wait for their slowest
  const inTurn = atMost(AT_ONCE);
  const runs = await Promise.all(
    SEEDS.map((seed) => inTurn(async () => ({ seed, run: await verify(["--suites", "functional"], seed) }))),
  );
  for (const { seed, run } of runs) {
    counts.push(run.results.checks.length);
    for (const c of run.results.checks) {
      const byRun = outcomes.get(c.id) ?? new Map<number, CheckResult["status"]>();
      byRun.set(seed, c.status);
      outcomes.set(c.id, byRun);
    }
    const red = run.results.checks.filter((c) => c.status === "failed" || c.status === "error");
    expect(
      red.map((c) => `seed ${seed}: ${c.id}: ${c.message?.split("\n", 1)[0]}`),
      `seed ${seed}: replay with verify --suites functional --seed ${seed}`,
    ).toEqual([]);
    expect(run.code, `seed ${seed}: exit code`).toBe(0);
  }
  const flaky = [...outcomes]
    .filter(([, byRun]) => byRun.size !== SEEDS.length || new Set(byRun.values()).size > 1)
    .map(([id, byRun]) => `${id}: ${[...byRun].map(([seed, status]) => `${seed}=${status}`).join(" ")}`);
  expect(flaky, "checks whose outcome changed between runs, or that ran in some runs only").toEqual([]);
  expect(new Set(counts).size, `check counts per run: ${counts.join(", ")}`).toBe(1);
});
