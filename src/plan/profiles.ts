/**
 * Run profiles. `full` runs every check; `smoke` only the checks tagged `smoke`
 * (suites/support/harness.ts `smoke(...)`): every endpoint's main success and error paths, each
 * response still judged by every response-level check — minutes at W = 60, the per-deploy gate.
 */
export const PROFILES = ["full", "smoke"] as const;
export type Profile = (typeof PROFILES)[number];

/** The vitest test tags checks may carry; vitest refuses a tag it was not told of. */
export const CHECK_TAGS = [{ name: "smoke", description: "every endpoint's main success and error paths (--profile smoke)" }];
