import { newRunId } from "../../src/report/write.js";
import { runPrefixFor } from "../../src/target/harness-target.js";

/**
 * `agent-harness cleanup` in the configuration matrix: a deployment holds what a run killed two
 * hours ago left, the agents of a run still going, and another client's agent; the sweep must
 * delete exactly what it names (`every-run`: the default prefix, runs older than --older-than's
 * hour; `one-run`: one run's prefix, whatever its age; `dry-run`: nothing, each listed) and keep
 * the rest — behind a TLS terminator, through a forward proxy, with another client busy.
 */
export const SWEEPS = ["every-run", "one-run", "dry-run"] as const;
export type Sweep = (typeof SWEEPS)[number];

export interface Leftovers {
  /** a run started two hours ago and killed before its own sweep */
  old: string[];
  /** a run started now, perhaps still going on another runner */
  recent: string[];
  recentPrefix: string;
  /** another client's agent, named as no run names one */
  foreign: string[];
}

/** The agents a cleanup row makes before the sweep, by name. */
export function leftovers(now = Date.now()): Leftovers {
  const old = runPrefixFor(newRunId(new Date(now - 2 * 3600_000)));
  const recent = runPrefixFor(newRunId(new Date(now)));
  return {
    old: [`${old}killed-1`, `${old}killed-2`],
    recent: [`${recent}going-1`, `${recent}going-2`],
    recentPrefix: recent,
    foreign: ["someone-else-kept"],
  };
}

/** cleanup's arguments for the sweep, after those that reach the deployment. */
export const sweepArgs = (sweep: Sweep, l: Leftovers): string[] =>
  sweep === "one-run" ? ["--prefix", l.recentPrefix] : sweep === "dry-run" ? ["--dry-run"] : [];

/** The seeded agents the sweep must delete; every other must be left. */
export const sweptBy = (sweep: Sweep, l: Leftovers): string[] =>
  sweep === "every-run" ? l.old : sweep === "one-run" ? l.recent : [];

/** Why each seeded agent the sweep must leave is left. */
const keptBecause = (name: string, sweep: Sweep, l: Leftovers) =>
  l.foreign.includes(name)
    ? "another client's agent, not named as a run's"
    : sweep === "dry-run"
      ? "--dry-run deletes nothing"
      : l.recent.includes(name)
        ? "a run started less than --older-than's hour ago may still be using it"
        : "another run's, outside --prefix";

/**
 * The promises of one sweep of a conformant deployment, each broken one in a sentence: exit 0;
 * every agent it must delete gone (exit 0 with one left is a green for a sweep it did not do);
 * every other kept; a dry run naming each it would delete.
 */
export function judgeCleanup(
  seen: { code: number | null; output: string; remaining: readonly string[] },
  sweep: Sweep,
  l: Leftovers,
): string[] {
  const broken: string[] = [];
  const lastLine = seen.output.trim().split("\n").at(-1) ?? "";
  if (seen.code !== 0) broken.push(`cleanup exited ${seen.code} on a conformant deployment: ${lastLine}`);
  const swept = sweptBy(sweep, l);
  for (const name of [...l.old, ...l.recent, ...l.foreign]) {
    const left = seen.remaining.includes(name);
    if (swept.includes(name) && left && seen.code === 0) broken.push(`exit 0, yet ${name} is still there`);
    if (!swept.includes(name) && !left) broken.push(`${name} was deleted: ${keptBecause(name, sweep, l)}`);
  }
  if (sweep === "dry-run")
    for (const name of l.old)
      if (!seen.output.includes(name)) broken.push(`--dry-run did not list ${name}, which a sweep would delete`);
  return broken;
}
