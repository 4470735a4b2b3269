import { describe, expect, test } from "vitest";
import type { CheckResult } from "../report/index.js";
import { type PlannedCheck, unreportedRows } from "./completeness.js";

const planned = (id: string): PlannedCheck => ({ id, title: id, suite: "functional", file: `suites/functional/${id}.test.ts` });
const reported = (id: string, status: CheckResult["status"] = "passed"): CheckResult => ({
  ...planned(id),
  clauseIds: [],
  sections: [],
  status,
  durationMs: 1,
});

describe("a run reports every check it planned", () => {
  test("all reported, run or skipped: nothing added", () => {
    const { rows, shortfall } = unreportedRows({
      planned: [planned("a"), planned("b")],
      checks: [reported("a"), reported("b", "skipped")],
      bail: false,
      stopped: false,
    });
    expect(rows).toEqual([]);
    expect(shortfall).toBeUndefined();
  });

  test("a planned check never reported is a harness error naming it, and the run's last line", () => {
    const { rows, shortfall } = unreportedRows({
      planned: [planned("a"), planned("b"), planned("c")],
      checks: [reported("a")],
      bail: false,
      stopped: false,
    });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: "run.complete", status: "error", suite: "run" });
    expect(rows[0]!.message).toContain('"b" (suites/functional/b.test.ts)');
    expect(shortfall).toMatch(/reported 1 of the 3 checks it planned \(2 neither ran nor were skipped\): not a pass/);
  });

  test("on a deployment, a check the plan's calibration ran is promised too (what --dry-run counted)", () => {
    const { rows } = unreportedRows({
      planned: [planned("a")],
      calibrated: [reported("a"), reported("b"), reported("c", "skipped")],
      checks: [reported("a")],
      bail: false,
      stopped: false,
    });
    expect(rows[0]?.message).toMatch(/reported 1 of the 2 checks/);
  });

  test("--bail after a failure: the checks not run are skipped, naming the flag; without a failure it is still an error", () => {
    const bailed = unreportedRows({
      planned: [planned("a"), planned("b")],
      checks: [reported("a", "failed")],
      bail: true,
      stopped: false,
    });
    expect(bailed.rows).toEqual([
      expect.objectContaining({ id: "b", status: "skipped", message: expect.stringMatching(/--bail/) }),
    ]);
    expect(bailed.shortfall).toBeUndefined();
    const noFailure = unreportedRows({
      planned: [planned("a"), planned("b")],
      checks: [reported("a")],
      bail: true,
      stopped: false,
    });
    expect(noFailure.rows[0]?.status).toBe("error");
  });

  test("a stopped run (interrupted, or at its bound) says so itself: nothing added", () => {
    expect(unreportedRows({ planned: [planned("a")], checks: [], bail: false, stopped: true }).rows).toEqual([]);
  });
});
