import { describe, expect, test } from "vitest";
import type { TestSpecification, Vitest } from "vitest/node";
import { LaneOrder, QuickestFirst } from "./file-order.js";

const ROOT = "/repo";
const spec = (file: string) => ({ moduleId: `${ROOT}/${file}`, project: { name: "" } }) as unknown as TestSpecification;

/** vitest's cache as a sequencer reads it: the last run's time of a file, and its size. */
function vitestWith(durations: Record<string, number>, sizes: Record<string, number>): Vitest {
  const file = (key: string) => key.replace(/^:/, "");
  return {
    config: { root: ROOT },
    cache: {
      getFileTestResults: (key: string) =>
        durations[file(key)] === undefined ? undefined : { duration: durations[file(key)], failed: false },
      getFileStats: (key: string) => (sizes[file(key)] === undefined ? undefined : { size: sizes[file(key)] }),
    },
  } as unknown as Vitest;
}

describe("the order of a run's files", () => {
  test("--bail: files with no time yet first (smaller first), then the quickest by their last run", () => {
    const files = ["slow.test.ts", "quick.test.ts", "new-big.test.ts", "new-small.test.ts", "middle.test.ts"];
    const order = new QuickestFirst(
      vitestWith(
        { "slow.test.ts": 9000, "quick.test.ts": 40, "middle.test.ts": 700 },
        { "new-big.test.ts": 9e4, "new-small.test.ts": 10 },
      ),
    ).sort(files.map(spec));
    expect(order.map((s) => s.moduleId.replace(`${ROOT}/`, ""))).toEqual([
      "new-small.test.ts",
      "new-big.test.ts",
      "quick.test.ts",
      "middle.test.ts",
      "slow.test.ts",
    ]);
  });

  test("a lane: by name, the files that wait for the quota lane last", () => {
    const files = [
      "suites/functional/limits-account.test.ts",
      "suites/functional/list-isolation.test.ts",
      "suites/functional/auth.test.ts",
    ];
    expect(new LaneOrder().sort(files.map(spec)).map((s) => s.moduleId.replace(`${ROOT}/suites/functional/`, ""))).toEqual([
      "auth.test.ts",
      "list-isolation.test.ts",
      "limits-account.test.ts",
    ]);
  });
});
