import type { HarnessTarget } from "../target/harness-target.js";

/** A deployment as the load scenarios see it, for unit tests: nothing is sent unless a test serves `baseUrl`. */
export function deploymentAt(baseUrl: string, overrides: Partial<HarnessTarget> = {}): HarnessTarget {
  return {
    kind: "external",
    baseUrl,
    keys: { main: "ak_test_load_main_000001" },
    windowSeconds: 60,
    messageTimeoutSeconds: 30,
    referenceFaults: false,
    idField: "id",
    runPrefix: "ah-test-",
    ledgerFile: "/dev/null",
    seed: 1,
    ...overrides,
  };
}
