import type { FileNeeds } from "../../src/plan/lanes.js";

/**
 * What this file's checks need (key roles, messages, buckets emptied on purpose …), stated once
 * next to them: the planner places the file in an account lane from this alone (src/plan/lanes.ts).
 * It reads the declarations without running vitest, from src/run/suite-needs.generated.ts, which
 * `npx tsx scripts/suite-needs.ts` writes from these calls and src/run/suite-needs.test.ts keeps
 * fresh: so the argument is a plain object literal.
 */
export function declareFile(needs: FileNeeds): FileNeeds {
  return needs;
}
