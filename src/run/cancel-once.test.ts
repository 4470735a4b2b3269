import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { cancelOnce } from "./cancel-once.js";

/**
 * Files that fail at one instant, in workers of their own, under `bail: 1`: each worker asks vitest
 * to cancel the run within a round trip of the others. Without cancelOnce vitest took the second
 * ask for a forced cancel and killed the workers before they reported (no failure reported in
 * about half of such runs); with it, every file is reported, failed (or skipped, when its worker
 * started only after the cancel).
 */
const FILES = ["a", "b", "c", "d"];
const dir = mkdtempSync(join(tmpdir(), "agent-harness-cancel-once-"));
for (const name of FILES)
  writeFileSync(
    join(dir, `${name}.test.mjs`),
    `import { test } from "vitest";
test("${name} fails", async () => {
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(process.env.FAIL_AT) - Date.now())));
  throw new Error("${name} failed on purpose");
});
`,
  );
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Three runs: each has about an even chance of losing every failure without cancelOnce. */
const ROUNDS = 3;

test(
  "files failing at once under --bail: every failure is reported, none lost to a forced cancel",
  { timeout: 120_000 },
  async () => {
    const { createVitest } = await import("vitest/node");
    for (let round = 1; round <= ROUNDS; round++) {
      // the workers start (about a second each on a busy runner) before the instant they fail at
      process.env.FAIL_AT = String(Date.now() + 3000);
      const reported: string[] = [];
      const vitest = await createVitest(
        "test",
        {
          config: false,
          root: dir,
          include: ["*.test.mjs"],
          watch: false,
          pool: "forks",
          maxWorkers: FILES.length,
          fileParallelism: true,
          bail: 1,
          cache: false,
          reporters: [{ onTestCaseResult: (t) => void reported.push(`${t.name}: ${t.result().state}`) }],
        },
        { logLevel: "silent" },
      );
      cancelOnce(vitest);
      try {
        await vitest.start();
      } finally {
        await vitest.close();
      }
      // every file is reported: failed, or skipped when a busy runner started its worker only after
      // the cancel (vitest's graceful bail); none lost, and the failures that bailed among them
      const states = new Map(reported.map((line) => line.split(" fails: ") as [string, string]));
      expect([...states.keys()].sort(), `round ${round}: ${reported.join(", ")}`).toEqual(FILES);
      expect(
        [...states.values()].filter((s) => s !== "failed" && s !== "skipped"),
        `round ${round}`,
      ).toEqual([]);
      expect([...states.values()].filter((s) => s === "failed").length, `round ${round}`).toBeGreaterThan(0);
    }
    delete process.env.FAIL_AT;
  },
);
