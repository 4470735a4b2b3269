import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { handOverClock, takeHandedClock } from "./clock-handover.js";
import type { ServiceClock } from "./service-clock.js";

const dir = mkdtempSync(join(tmpdir(), "agent-harness-clock-handover-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CLOCK: ServiceClock = { offsetMs: -42, uncertaintyMs: 50, source: "date", probes: 4 };

describe("the service's clock handed from the run to its workers", () => {
  test("a worker takes the estimate as the run wrote it, and the folder holds only the file", () => {
    const file = join(dir, "run-1", ".service-clock.json");
    handOverClock(file, { clock: CLOCK });
    expect(takeHandedClock(file)).toEqual(CLOCK);
    expect(readdirSync(join(dir, "run-1"))).toEqual([".service-clock.json"]);
  });

  test("a failed estimate is thrown in the worker with its reason, not waited for", () => {
    const file = join(dir, "failed.json");
    handOverClock(file, { failed: "connect ECONNREFUSED 127.0.0.1:1" });
    const started = Date.now();
    expect(() => takeHandedClock(file)).toThrow(/could not be estimated: connect ECONNREFUSED/);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  test("an estimate that never comes ends the wait at its bound, naming the file", () => {
    let now = 0;
    const clock = () => (now += 400);
    expect(() => takeHandedClock(join(dir, "never.json"), 2_000, clock)).toThrow(/not estimated within 2 s .*never\.json/);
  });

  test("a file that is not an estimate is an error, not a clock", () => {
    const file = join(dir, "garbage.json");
    writeFileSync(file, JSON.stringify({ clock: { offsetMs: "soon" } }));
    expect(() => takeHandedClock(file)).toThrow();
  });
});
