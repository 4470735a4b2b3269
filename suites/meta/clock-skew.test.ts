import { describe, expect, test } from "vitest";
import { type VerifyRun, verify } from "./verify-run.js";

/**
 * A service on another clock (PROFILE §4 createdAt/updatedAt and §7 X-RateLimit-Reset are times
 * on its clock): `verify` judges them on the service's clock, estimated from its Date header. A
 * reference server 10 s ahead or behind raises no alarm, and a header 5 s off its own clock is
 * still caught. §4 alone keeps each run to seconds; every answer there passes the §7 header checks.
 */
const SKEWS = [10, -10] as const;
const SCOPE = ["--sections", "§4", "--suites", "functional", "--workers", "2"];
const HEADER_FAULTS = ["--fault", "reset-behind-clock", "--fault", "timestamps-behind-clock"];
const errorsIn = (run: VerifyRun) => run.results.checks.filter((c) => c.status === "error" || c.status === "failed");

describe("meta: a service on another clock", { concurrent: true }, () => {
  test.for(SKEWS)("a clean server %i s off: no finding, the offset estimated", { timeout: 300_000 }, async (skew) => {
    const run = await verify([`--clock-skew=${skew}`, ...SCOPE]);
    expect((run.results.findings ?? []).map((f) => f.message)).toEqual([]);
    expect(errorsIn(run).map((c) => `${c.id}: ${c.message}`)).toEqual([]);
    expect(run.code).toBe(0);
    expect(run.results.serviceClock?.source).toBe("date");
    expect(Math.abs((run.results.serviceClock?.offsetMs ?? 0) - skew * 1000)).toBeLessThan(500);
    expect(run.output).toMatch(/^service clock: [+−]\d+\.\d\d s ± 0\.\d\d s from the runner.s \(its Date header/m);
  });

  test.for(SKEWS)(
    "a server %i s off with Reset and createdAt 5 s off its clock: both caught",
    { timeout: 300_000 },
    async (skew) => {
      const run = await verify([`--clock-skew=${skew}`, ...HEADER_FAULTS, ...SCOPE]);
      const clauses = new Set((run.results.findings ?? []).flatMap((f) => f.clauseIds));
      expect([...clauses]).toEqual(expect.arrayContaining(["limits.headers", "record.timestamps"]));
      expect(run.code).toBe(1);
    },
  );
});
