import { ENDPOINT_LIST, type EndpointSpec } from "../contract/index.js";
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
    for (const v of check.run(ex, ctx)) out.push({ check: check.id, clause: check.clause, ...v });
  }
  return out;
}

const PATTERNS = ENDPOINT_LIST.map((spec) => ({ spec, regex: new RegExp(`^${spec.path.replace(":agentId", "[^/]+")}$`) }));

/** The endpoint a request addressed, by method and exact path (a variant such as a trailing slash matches none). */
export function matchEndpoint(method: string, url: string, baseUrl: string): EndpointSpec | undefined {
  const base = new URL(baseUrl).pathname.replace(/\/+$/, "");
  const path = new URL(url).pathname;
  if (!path.startsWith(`${base}/`)) return undefined;
  const rel = path.slice(base.length);
  return PATTERNS.find((p) => p.spec.method === method.toUpperCase() && p.regex.test(rel))?.spec;
}

export function formatViolation(v: Violation): string {
  return `[${v.clause}] ${v.check}: expected ${v.expected}; received ${v.received}`;
}
