import type { CheckContext, ObservedExchange, ResponseCheck, Violation } from "./define.js";
import { RESPONSE_CHECKS } from "./registry.js";

/** Every applicable check on one exchange. A check that throws is itself a violation to report. */
export function runChecks(
  ex: ObservedExchange,
  ctx: CheckContext,
  checks: readonly ResponseCheck[] = RESPONSE_CHECKS,
): Violation[] {
  const out: Violation[] = [];
  for (const check of checks) {
    if (!check.applies(ex, ctx)) continue;
    for (const v of check.run(ex, ctx)) out.push({ ...v, check: check.id, clause: v.clause ?? check.clause });
  }
  return out;
}
