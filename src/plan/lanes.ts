import type { HarnessTarget, KeyLabel } from "../target/harness-target.js";
import { KEY_ROLE_NAMES, KEY_ROLES } from "../target/key-roles.js";

/**
 * Account lanes: a deployment's run spends two accounts' tiers at once (PROFILE §7: the tier is
 * per account). The suite files split into two lanes that run side by side, each in a worker of
 * its own, each the only user of its accounts, so each lane's pacing counts every request of its
 * buckets:
 * - the main lane: the main account (main and read-only keys), with the quota account standing in
 *   as "another account" for the isolation checks (any second account proves isolation, PROFILE §6);
 * - the other lane: the other account, as the main account of its checks; its files need no
 *   read-only, other-account or quota key.
 * The checks are the same; which account's tier pays for them is all that changes.
 */
export type Lane = NonNullable<HarnessTarget["lane"]>;

/** The files of the other lane (by name under suites/): each needs only a key with all four permissions. */
export const OTHER_LANE_FILES: readonly string[] = [
  "functional/update.test",
  "functional/envelopes.test",
  "functional/errors.test",
  "functional/messages.test",
  "functional/reference-faults.test",
  "functional/transport.test",
  "property/properties.test",
  "property/stateful.test",
];

const nameOf = (file: string) => file.replace(/\\/g, "/").replace(/\.(ts|js)$/, "");

export function laneOfFile(file: string): Lane {
  return OTHER_LANE_FILES.some((f) => nameOf(file).endsWith(`suites/${f}`)) ? "other" : "main";
}

/**
 * The files that spend the quota account's message quota run last in their lane: before that, the
 * quota account stands in as another account, and PROFILE §3 lets a spent quota's 429
 * INSUFFICIENT_QUOTA answer a message to another account's agent as well as its 404.
 */
const QUOTA_SPENDING_FILES: readonly string[] = ["functional/limits-account.test"];

/** A lane's files in a fixed order (the calibration counts them in the order the run sends them): by name, quota spenders last. */
export function laneFileOrder(a: string, b: string): number {
  const last = (file: string) => (QUOTA_SPENDING_FILES.some((f) => nameOf(file).endsWith(`suites/${f}`)) ? 1 : 0);
  return last(a) - last(b) || nameOf(a).localeCompare(nameOf(b));
}

/**
 * Lanes need an account for each: the other account's key, and the quota account's key to stand
 * in for it in the main lane. A target the harness starts has accounts per worker: no lanes there,
 * except when a plan's calibration run counts for a deployment that has them.
 */
export function usesAccountLanes(target: HarnessTarget): boolean {
  const keys = target.keys;
  return (target.kind === "external" || target.accountLanes === true) && !!keys.otherAccount && !!keys.quota;
}

/** Every key of a key set with its role and account: what a lane's swapped key set must not lose. */
function keyLabelsOf(keys: HarnessTarget["keys"]): Record<string, KeyLabel> {
  const labels: Record<string, KeyLabel> = {};
  const mainKeys = keys.mainKeys ?? [keys.main];
  mainKeys.forEach((key, i) => {
    labels[key] = { role: "main", account: "main", footprint: `main#${i}` };
  });
  for (const role of KEY_ROLE_NAMES) {
    const value = keys[role];
    if (role === "main" || value === undefined) continue;
    for (const key of typeof value === "string" ? [value] : value)
      labels[key] ??= { role, account: KEY_ROLES[role].account, footprint: role };
  }
  return labels;
}

function laneKeys(keys: HarnessTarget["keys"], lane: Lane): HarnessTarget["keys"] {
  if (lane === "other") return { main: keys.otherAccount!, mainKeys: [keys.otherAccount!] };
  // the quota account stands in as another account: the other account is the other lane's alone
  return { ...keys, otherAccount: keys.quota! };
}

function laneShare<T>(pool: readonly T[], lane: Lane): T[] {
  const main = Math.max(1, Math.ceil(pool.length / 2));
  return lane === "main" ? pool.slice(0, main) : pool.length > 1 ? pool.slice(main) : [...pool];
}

/** The target as a lane's checks see it: the lane's account as their main account. */
export function laneTarget(target: HarnessTarget, lane: Lane): HarnessTarget {
  // a key in several key sets keeps the labels of the last, as when they were assigned in turn
  const labels = Object.fromEntries((target.keyPool ?? [target.keys]).flatMap((keys) => Object.entries(keyLabelsOf(keys))));
  return {
    ...target,
    keys: laneKeys(target.keys, lane),
    // a calibration run's workers (one per key set) are shared out, the main lane's files being more
    ...(target.keyPool ? { keyPool: laneShare(target.keyPool, lane).map((keys) => laneKeys(keys, lane)) } : {}),
    keyLabels: labels,
    lane,
  };
}
