import { CLAUSES, SECTIONS } from "../contract/index.js";

/**
 * Run profiles. `full` runs every check; `smoke` only the checks tagged `smoke`
 * (suites/support/harness.ts `smoke(...)`): every endpoint's main success and error paths, each
 * response still judged by every response-level check — minutes at W = 60, the per-deploy gate.
 */
export const PROFILES = ["full", "smoke"] as const;
export type Profile = (typeof PROFILES)[number];

/**
 * The vitest test tags checks may carry; vitest refuses a tag it was not told of. Besides `smoke`,
 * each check carries its PROFILE sections and clause ids (`selectionTags`), which `--sections`
 * selects by.
 */
export const CHECK_TAGS = [
  { name: "smoke", description: "every endpoint's main success and error paths (--profile smoke)" },
  ...SECTIONS.map((name) => ({ name, description: `a check citing a clause of PROFILE ${name}` })),
  ...CLAUSES.map((c) => ({ name: c.id, description: `a check citing PROFILE ${c.section} ${c.id}` })),
];
