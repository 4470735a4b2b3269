import { describe, expect, test } from "vitest";
import { VITEST_CANCEL_NOTE } from "./suites.js";
import { vitestRunnerSources } from "./test-support-vitest.js";

describe("a check stopped while it ran", () => {
  // the run recognises vitest's note on a cancelled test by its words: the installed runner must
  // still write exactly these, or a --bail run would report vitest's "aborted by the user" again
  test("vitest's runner marks a cancelled test with the note the run looks for", () => {
    const sources = vitestRunnerSources();
    expect(sources.some((source) => source.includes(`new TestRunAbortError(${JSON.stringify(VITEST_CANCEL_NOTE)}`))).toBe(true);
  });
});
