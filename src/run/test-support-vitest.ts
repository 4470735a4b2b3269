import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/**
 * The sources of the vitest runner that vitest itself loads (a dependency of vitest's, not of the
 * harness), for tests that pin the runner's wording the harness reads: its note on a cancelled
 * check, its message on a timed-out one.
 */
export function vitestRunnerSources(): string[] {
  const fromVitest = createRequire(createRequire(import.meta.url).resolve("vitest/package.json"));
  const dist = dirname(fromVitest.resolve("@vitest/runner"));
  return readdirSync(dist, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".js"))
    .map((file) => readFileSync(join(dist, file), "utf8"));
}
