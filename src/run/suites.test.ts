import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { describe, expect, test } from "vitest";
import { VITEST_CANCEL_NOTE } from "./suites.js";

describe("a check stopped while it ran", () => {
  // the run recognises vitest's note on a cancelled test by its words: the installed runner must
  // still write exactly these, or a --bail run would report vitest's "aborted by the user" again
  test("vitest's runner marks a cancelled test with the note the run looks for", () => {
    // the runner vitest itself loads (a dependency of vitest's, not of the harness)
    const fromVitest = createRequire(createRequire(import.meta.url).resolve("vitest/package.json"));
    const dist = dirname(fromVitest.resolve("@vitest/runner"));
    const sources = readdirSync(dist, { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".js"))
      .map((file) => readFileSync(join(dist, file), "utf8"));
    expect(sources.some((source) => source.includes(`new TestRunAbortError(${JSON.stringify(VITEST_CANCEL_NOTE)}`))).toBe(true);
  });
});
