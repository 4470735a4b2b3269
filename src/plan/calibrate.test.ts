import { describe, expect, test } from "vitest";
import { deploymentAt } from "../load/test-support.js";
import type { HarnessTarget } from "../target/harness-target.js";
import { calibrate } from "./calibrate.js";

/** The keys the calibration's run against the embedded reference was given, for a target with `keys`. */
async function keysCalibratedFor(keys: HarnessTarget["keys"]): Promise<string[]> {
  let given: HarnessTarget["keys"] | undefined;
  await calibrate({
    target: deploymentAt("http://127.0.0.1:9/v1", { keys, tierLimit: 60 }),
    runSuites: async (t) => {
      given = t.keys;
    },
  });
  return Object.keys(given ?? {}).sort();
}

/**
 * The plan (and a dry run's count) comes from the same suites run against a reference shaped like
 * the target: a key the target has and the calibration leaves out skips there the checks that run
 * against the target, and the dry run promises fewer checks than the run then runs.
 */
describe("the calibration's keys", () => {
  test("are the target's roles: the load and small-tier accounts too", async () => {
    expect(await keysCalibratedFor({ main: "m", load: "l", tierBurst: "t" })).toEqual(["load", "main", "mainKeys", "tierBurst"]);
  });

  test("leave out the roles the target has not", async () => {
    expect(await keysCalibratedFor({ main: "m", readOnly: "r" })).toEqual(["main", "mainKeys", "readOnly"]);
  });
});
