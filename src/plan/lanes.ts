import type { HarnessTarget, KeyLabel } from "../target/harness-target.js";
import { KEY_ROLE_NAMES, KEY_ROLES } from "../target/key-roles.js";
import type { PlanLimits } from "./plan.js";

/**
 * Account lanes: a deployment's run spends its accounts' tiers at once (PROFILE §7: the tier is
 * per account). The suite files split into lanes that run side by side, each in a worker of its
 * own, each the main account of its checks:
 * - the main lane: the main account (main and read-only keys), with the quota account standing in
 *   as "another account" for the isolation checks (any second account proves isolation, PROFILE §6);
 * - the other lane: the other account; its files need no read-only, other-account or quota key;
 * - the quota lane, with a known tier: the quota account, whose tier the quota check hardly uses.
 *   Its files need only a main key, send no Send Message (the account's quota is the quota
 *   check's, and PROFILE §3 lets a spent quota answer any message 429), empty no bucket on purpose
 *   and judge no X-RateLimit-Remaining across answers: the main lane uses the same account and key
 *   meanwhile, both within their shares (GUEST_SHARE), so neither empties a bucket under the other.
 * The main and other accounts have one lane each, so there each lane's pacing counts every request.
 * The checks are the same; which account's tier pays for them is all that changes.
 */
export type Lane = NonNullable<HarnessTarget["lane"]>;

/** The files of the other lane (by name under suites/): each needs only a key with all four permissions. */
export const OTHER_LANE_FILES: readonly string[] = [
  "functional/envelopes.test",
  "functional/errors.test",
  "functional/limits-buckets.test",
  "functional/messages.test",
  "functional/reference-faults.test",
  "functional/update-messages.test",
  "property/properties.test",
  "property/stateful.test",
];

/**
 * The files of the quota lane: each needs only a key with all four permissions, sends no Send
 * Message, sends every request paced and judges each answer on its own. Without a quota lane they
 * run in the other lane.
 */
export const QUOTA_LANE_FILES: readonly string[] = [
  "functional/list.test",
  "functional/transport.test",
  "functional/update.test",
];

/**
 * The main lane's use of the quota account while the quota lane runs, and the quota lane's at the
 * same time, split every bucket both count in (src/client/rate-share.ts): the main lane keeps to
 * this part, the quota lane to the rest. From a calibration run (seed 7): the main lane sends 21
 * requests there before its last files, 9 of them in a row (the isolation checks of auth.test),
 * and 9 rejected creates that alternate with the main key's (create.test), 3 a window at this
 * part. The quota lane gets 50 of a standard tier's 60, 7 of Create's 10 and 27 of Update's 30: its
 * update.test is paced by Update (measured: a guest part of 5 saved the main lane a minute in
 * create.test and cost the quota lane's update.test and list.test two, so the run one).
 */
export const GUEST_SHARE = { tier: 10, endpoint: 3 } as const;

/**
 * The main lane's files that run after the quota lane has ended, last in their lane: they create
 * agents in the quota account (the quota lane's lists must see only their own) or count its
 * X-RateLimit-Remaining from one answer to the next (no other user may count between).
 */
export const AFTER_QUOTA_LANE_FILES: readonly string[] = ["functional/list-isolation.test", "functional/limits-account.test"];

const nameOf = (file: string) => file.replace(/\\/g, "/").replace(/\.(ts|js)$/, "");
const isOneOf = (files: readonly string[], file: string) => files.some((f) => nameOf(file).endsWith(`suites/${f}`));

/** Whether a file of the main lane starts only once the quota lane has ended. */
export const waitsForQuotaLane = (file: string) => isOneOf(AFTER_QUOTA_LANE_FILES, file);

/** The lane a file runs in, among `lanes` (the quota lane's files go to the other lane when there is none). */
export function laneOfFile(file: string, lanes: readonly Lane[] = ["main", "other", "quota"]): Lane {
  if (isOneOf(QUOTA_LANE_FILES, file)) return lanes.includes("quota") ? "quota" : "other";
  return isOneOf(OTHER_LANE_FILES, file) ? "other" : "main";
}

/**
 * The files that spend the quota account's message quota run last in their lane: before that, the
 * quota account stands in as another account, and PROFILE §3 lets a spent quota's 429
 * INSUFFICIENT_QUOTA answer a message to another account's agent as well as its 404.
 */
const QUOTA_SPENDING_FILES: readonly string[] = ["functional/limits-account.test"];

/** A lane's files in a fixed order (the calibration counts them in the order the run sends them): by name, those after the quota lane last, the quota spender last of all. */
export function laneFileOrder(a: string, b: string): number {
  const rank = (file: string) => (isOneOf(QUOTA_SPENDING_FILES, file) ? 2 : isOneOf(AFTER_QUOTA_LANE_FILES, file) ? 1 : 0);
  return rank(a) - rank(b) || nameOf(a).localeCompare(nameOf(b));
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

/**
 * The lanes of a run, or none: a third lane on the quota account needs the tier (--tier), so that
 * it can keep to its share of it, and a tier well above the main lane's part.
 */
export function lanesOf(target: HarnessTarget): Lane[] | undefined {
  if (!usesAccountLanes(target)) return undefined;
  const tier = target.tierLimit;
  return tier !== undefined && tier > 2 * GUEST_SHARE.tier ? ["main", "other", "quota"] : ["main", "other"];
}

function laneKeys(keys: HarnessTarget["keys"], lane: Lane): HarnessTarget["keys"] {
  if (lane === "other") return { main: keys.otherAccount!, mainKeys: [keys.otherAccount!] };
  if (lane === "quota") return { main: keys.quota!, mainKeys: [keys.quota!] };
  // the quota account stands in as another account: the other account is the other lane's alone
  return { ...keys, otherAccount: keys.quota! };
}

/** A calibration run's key sets (one per worker), shared out in consecutive parts, the main lane's first and larger. */
function laneShare<T>(pool: readonly T[], lane: Lane, lanes: readonly Lane[]): T[] {
  if (pool.length < lanes.length) return [...pool];
  const size = Math.ceil(pool.length / lanes.length);
  const i = lanes.indexOf(lane);
  return i === lanes.length - 1 ? pool.slice(i * size) : pool.slice(i * size, (i + 1) * size);
}

/** The file the run writes once the quota lane has ended: the main lane's last files wait for it. */
export const quotaLaneDoneFile = (target: Pick<HarnessTarget, "ledgerFile">) => `${target.ledgerFile}.quota-lane-ended`;

/** The target as a lane's checks see it: the lane's account as their main account. */
export function laneTarget(target: HarnessTarget, lane: Lane): HarnessTarget {
  const lanes = lanesOf(target) ?? ["main", "other"];
  // a key in several key sets keeps the labels of the last, as when they were assigned in turn
  const labels = Object.fromEntries((target.keyPool ?? [target.keys]).flatMap((keys) => Object.entries(keyLabelsOf(keys))));
  // the main and quota lanes use one quota key when there are not key sets enough for each lane its own
  const shared = lanes.includes("quota") && (target.keyPool?.length ?? 1) < lanes.length && lane !== "other";
  const quotaAccount = KEY_ROLES.quota.account;
  return {
    ...target,
    keys: laneKeys(target.keys, lane),
    ...(target.keyPool ? { keyPool: laneShare(target.keyPool, lane, lanes).map((keys) => laneKeys(keys, lane)) } : {}),
    keyLabels: labels,
    lane,
    ...(shared
      ? {
          accountShares: { [quotaAccount]: { guest: GUEST_SHARE, side: lane === "quota" ? "host" : "guest" } },
          ...(lane === "main" ? { afterQuotaLane: quotaLaneDoneFile(target) } : {}),
        }
      : {}),
  };
}

/** The accounts two lanes share, for the plan: the quota account, its lane the host, the main lane the guest. */
export function planShares(target: HarnessTarget): PlanLimits["shares"] {
  return lanesOf(target)?.includes("quota") ? { [KEY_ROLES.quota.account]: { host: "quota", guest: GUEST_SHARE } } : undefined;
}
