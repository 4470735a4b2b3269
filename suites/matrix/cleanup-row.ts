import { DEFAULT_OLDER_THAN } from "../../src/cli/cleanup.js";
import { parseDurationSeconds } from "../../src/load/capacity/options.js";
import { newRunId } from "../../src/report/write.js";
import { runPrefixFor } from "../../src/target/harness-target.js";
import { lastLineOf } from "./options.js";

/**
 * `agent-harness cleanup` in the configuration matrix: a deployment holds what a run killed twice
 * cleanup's default --older-than ago left, the agents of a run still going, and another client's
 * agents (one named with the harness's prefix, but as no run names one); the sweep must delete
 * exactly what it names (`every-run`: the default prefix and --older-than; `every-age`: the default
 * prefix with --older-than 0, a run still going included; `one-run`: one run's prefix, whatever
 * its age; `dry-run`: nothing, listing what every-run would delete) and keep the
 * rest — behind a TLS terminator, through a forward proxy, with another client busy.
 */
export const SWEEPS = ["every-run", "every-age", "one-run", "dry-run"] as const;
export type Sweep = (typeof SWEEPS)[number];

export interface Leftovers {
  /** a run started twice the default --older-than ago, killed before its own sweep */
  old: string[];
  /** a run started now, perhaps still going on another runner */
  recent: string[];
  recentPrefix: string;
  /** another client's agents: named as no run names one, with the harness's prefix or not */
  foreign: string[];
}

/** cleanup's default --older-than, in seconds */
const OLDER_THAN_SECONDS = Number(parseDurationSeconds(DEFAULT_OLDER_THAN, "--older-than"));

/** The agents a cleanup row makes before the sweep, by name. */
export function leftovers(now = Date.now()): Leftovers {
  const old = runPrefixFor(newRunId(new Date(now - 2 * OLDER_THAN_SECONDS * 1000)));
  const recent = runPrefixFor(newRunId(new Date(now)));
  return {
    old: [`${old}killed-1`, `${old}killed-2`],
    recent: [`${recent}going-1`, `${recent}going-2`],
    recentPrefix: recent,
    foreign: ["someone-else-kept", "ah-notes-kept"],
  };
}

/** cleanup's arguments for the sweep, after those that reach the deployment. */
export const sweepArgs = (sweep: Sweep, l: Leftovers): string[] =>
  ({ "every-run": [], "every-age": ["--older-than", "0"], "one-run": ["--prefix", l.recentPrefix], "dry-run": ["--dry-run"] })[
    sweep
  ];

/** The seeded agents the sweep must delete; every other must be left. */
export const sweptBy = (sweep: Sweep, l: Leftovers): string[] =>
  ({ "every-run": l.old, "every-age": [...l.old, ...l.recent], "one-run": l.recent, "dry-run": [] })[sweep];

/** Why a seeded agent the sweep must leave is left. */
const keptBecause = (name: string, sweep: Sweep, l: Leftovers) =>
  l.foreign.includes(name)
    ? "another client's agent, not named as a run's"
    : sweep === "dry-run"
      ? "--dry-run deletes nothing"
      : l.recent.includes(name)
        ? `a run started less than --older-than's ${DEFAULT_OLDER_THAN} ago may still be using it`
        : "another run's, outside --prefix";

/** What cleanup says when the Delete bucket stayed empty through its retries: exit 2, no verdict. */
const STILL_RATE_LIMITED = /still rate-limited after the retries; run it again later/;

/**
 * The promises of one sweep of a conformant deployment, each broken one in a sentence: exit 0
 * (or, with another client `busy` in the account, exit 2 saying the buckets stayed empty); every
 * agent it must delete gone (exit 0 with one left is a green for a sweep it did not do); every
 * other kept; a dry run listing each it would delete, and no other.
 */
export function judgeCleanup(
  seen: { code: number | null; output: string; remaining: readonly string[] },
  sweep: Sweep,
  l: Leftovers,
  busy = false,
): string[] {
  const broken: string[] = [];
  const excused = busy && seen.code === 2 && STILL_RATE_LIMITED.test(seen.output);
  if (seen.code !== 0 && !excused)
    broken.push(`cleanup exited ${seen.code} on a conformant deployment: ${lastLineOf(seen.output)}`);
  const swept = sweptBy(sweep, l);
  for (const name of [...l.old, ...l.recent, ...l.foreign]) {
    const left = seen.remaining.includes(name);
    if (swept.includes(name) && left && seen.code === 0) broken.push(`exit 0, yet ${name} is still there`);
    if (!swept.includes(name) && !left) broken.push(`${name} was deleted: ${keptBecause(name, sweep, l)}`);
  }
  if (sweep === "dry-run") {
    const listed = new Set([...seen.output.matchAll(/^would delete \S+ (\S+)$/gm)].map((m) => m[1]));
    for (const name of l.old) if (!listed.has(name)) broken.push(`--dry-run did not list ${name}, which a sweep would delete`);
    for (const name of [...l.recent, ...l.foreign])
      if (listed.has(name)) broken.push(`--dry-run listed ${name} as one it would delete: ${keptBecause(name, "every-run", l)}`);
  }
  return broken;
}
