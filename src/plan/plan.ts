import type { LaneSchedule, PlannedBucket, RunPlan } from "../report/plan-types.js";
import { bucketsOf, type PlanLimits } from "./buckets.js";
import type { FootprintEntry } from "./footprint.js";
import { scheduleLanes } from "./schedule.js";

export type { PlanLimits, RunPlan };

/** Requests a hook sent, outside any check. */
const isSetup = (e: FootprintEntry) => e.check.endsWith("(setup)");

const windowsFor = (requests: number, size: number | null) => (size === null ? null : Math.ceil(requests / size));

/** The per-bucket counts and the bound they imply, from a footprint (all of it, or what is left). */
function boundOf(entries: readonly FootprintEntry[], limits: PlanLimits) {
  const byBucket = new Map<string, PlannedBucket>();
  for (const entry of entries) {
    if (!entry.counted) continue;
    for (const [name, size] of bucketsOf(entry, limits)) {
      const b = byBucket.get(name) ?? { requests: 0, size, windows: null };
      b.requests++;
      b.windows = windowsFor(b.requests, size);
      byBucket.set(name, b);
    }
  }
  let binding = "none";
  let windows = 0;
  for (const [name, b] of byBucket)
    if ((b.windows ?? 0) > windows || ((b.windows ?? 0) === windows && name.startsWith("tier") && windows > 0)) {
      windows = b.windows ?? 0;
      binding = name;
    }
  const counted = Math.max(0, windows - 1) * limits.windowSeconds;
  // the order the lanes send in: a bucket emptied on purpose makes its next request wait a window
  const lanes = scheduleLanes(entries, limits);
  const ordered = Math.max(0, ...lanes.map((l) => l.seconds));
  return { byBucket, windows, binding, seconds: Math.max(counted, ordered), lanes };
}

/** A lane's least time and the refills it waits for, most first: "main 7 min 0 s, 9 refills (Get on key main#0 3, …)". */
function formatLane(lane: LaneSchedule): string {
  const refills = Object.values(lane.waits).reduce((a, n) => a + n, 0);
  const most = Object.entries(lane.waits)
    .sort(([, a], [, b]) => b - a)
    .slice(0, 3)
    .map(([name, n]) => `${name} ${n}`)
    .join(", ");
  return `  ${lane.lane}: ${formatSeconds(lane.seconds)}, waiting for ${refills} refill${refills === 1 ? "" : "s"}${most ? ` (${most})` : ""}`;
}

export function planRun(entries: readonly FootprintEntry[], limits: PlanLimits, source: string): RunPlan {
  const { byBucket, windows, binding, seconds, lanes } = boundOf(entries, limits);
  // Send Message buckets are per agent: one line for the busiest, not one per agent
  const requestsByBucket: Record<string, PlannedBucket> = {};
  const busiest = new Map<string, [string, PlannedBucket]>();
  for (const [name, b] of [...byBucket].sort(([x], [y]) => x.localeCompare(y))) {
    const agent = /^Send Message to agent \S+ \((.*)\)$/.exec(name);
    if (!agent) requestsByBucket[name] = b;
    else if ((busiest.get(agent[1]!)?.[1].requests ?? -1) < b.requests) busiest.set(agent[1]!, [name, b]);
  }
  for (const [account, [, b]] of busiest) requestsByBucket[`Send Message, busiest agent (${account})`] = b;
  return {
    windowSeconds: limits.windowSeconds,
    tierLimit: limits.tierLimit ?? null,
    mainKeys: limits.mainKeys,
    checks: new Set(entries.filter((e) => !isSetup(e)).map((e) => e.check)).size,
    requests: entries.length,
    countedRequests: entries.filter((e) => e.counted).length,
    lowerBoundWindows: windows,
    lowerBoundSeconds: seconds,
    binding: /^Send Message to agent/.test(binding) ? "Send Message to one agent" : binding,
    lanes,
    requestsByBucket,
    source,
  };
}

/** The plan in a few lines, for the terminal, before the run. */
export function formatPlan(plan: RunPlan): string {
  const top = Object.entries(plan.requestsByBucket)
    .filter(([, b]) => b.windows !== null)
    .sort(([, a], [, b]) => (b.windows ?? 0) - (a.windows ?? 0) || b.requests - a.requests)
    .slice(0, 4)
    .map(([name, b]) => `  ${name}: ${b.requests} requests, ${b.size} per window → ${b.windows} windows`);
  const tier =
    plan.tierLimit === null
      ? "tier unknown (give --tier): the account's bucket is left out of the bound"
      : `tier ${plan.tierLimit} per window, per account: all ${plan.mainKeys} main key(s) share it`;
  // where the bound comes from, account by account: each account's tier (or its lanes' shares of it)
  const accounts = Object.entries(plan.requestsByBucket)
    .filter(([name, b]) => name.startsWith("tier of") && b.windows !== null)
    .map(
      ([name, b]) =>
        `  ${name.replace(/^tier of the /, "")}: ${b.requests} requests, ${b.size} per window → ${b.windows} windows`,
    );
  const counted = Math.max(0, plan.lowerBoundWindows - 1) * plan.windowSeconds;
  const bound = formatSeconds(plan.lowerBoundSeconds);
  // the order binds when a lane waits for refills the count leaves out: each lane's time, and why
  const lanes = plan.lanes ?? [];
  const ordered = plan.lowerBoundSeconds > counted && lanes.length > 0;
  return [
    `plan: ${plan.checks} checks, ${plan.requests} requests (${plan.countedRequests} counted); W = ${plan.windowSeconds} s; ${tier}`,
    ordered
      ? `plan: needs ≥ ${plan.lowerBoundWindows} windows by count: ${plan.binding} → ${formatSeconds(counted)}`
      : `plan: needs ≥ ${plan.lowerBoundWindows} windows: ${plan.binding} → lower bound ${bound}`,
    ...(ordered
      ? [
          "plan: in the order the requests are sent, a bucket emptied on purpose makes its next request wait for the refill:",
          ...lanes.map(formatLane),
          `plan: lower bound ${bound} (the slowest ${lanes.length > 1 ? "lane" : "order"})`,
        ]
      : []),
    ...(accounts.length > 1 ? ["plan: the accounts' tiers:", ...accounts, "plan: the busiest buckets:"] : []),
    ...top,
  ].join("\n");
}

/** The bound of what the checks not yet done will send: the plan's estimate of the time left. */
export function secondsLeft(entries: readonly FootprintEntry[], done: ReadonlySet<string>, limits: PlanLimits): number {
  return boundOf(
    entries.filter((e) => !done.has(e.check) && !isSetup(e)),
    limits,
  ).seconds;
}

/**
 * What a run may add to its lower bound before it counts as a crawl: the checks' own time (message
 * budgets, round trips), which the request bound leaves out.
 */
export const RUN_BOUND_ALLOWANCE_SECONDS = 300;

/**
 * The time a planned run is stopped at: twice its lower bound and the allowance. A target whose
 * rate headers lie to the pacing (a Remaining that never goes down) once made a run of an 85 s
 * bound take 20 minutes; stopped here, it ends with the header finding.
 */
export function runBoundSeconds(plan: Pick<RunPlan, "lowerBoundSeconds">): number {
  return 2 * plan.lowerBoundSeconds + RUN_BOUND_ALLOWANCE_SECONDS;
}

/** The run's actual time against the plan's bound. */
export function withActual(plan: RunPlan, actualSeconds: number): RunPlan {
  const ratio = plan.lowerBoundSeconds > 0 ? actualSeconds / plan.lowerBoundSeconds : undefined;
  return {
    ...plan,
    actualSeconds: Math.round(actualSeconds * 10) / 10,
    ...(ratio !== undefined ? { ratio: Math.round(ratio * 100) / 100 } : {}),
  };
}

export function formatSeconds(s: number): string {
  if (s < 90) return `${Math.round(s)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${Math.round(s - m * 60)} s`;
}
