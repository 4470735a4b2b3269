import { RATE_LIMITS } from "../contract/index.js";
import type { HarnessTarget, KeyLabel } from "../target/harness-target.js";
import { KEY_ROLE_NAMES, KEY_ROLES } from "../target/key-roles.js";
import type { PlanLimits } from "./buckets.js";
import type { FileNeeds, NeedsOf } from "./file-needs.js";

export type { FileNeeds, NeedsOf };

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
 * Each file says what it needs (FileNeeds, declared next to its checks); its lane follows from that
 * and the keys given, and a lane none of the run's files needs does not start.
 * The main and other accounts have one lane each, so there each lane's pacing counts every request.
 * The checks are the same; which account's tier pays for them is all that changes.
 */
export type Lane = NonNullable<HarnessTarget["lane"]>;

/** Its checks need no key but one with all four permissions: any account's lane can run them. */
const needsOnlyAMainKey = (needs: FileNeeds | undefined): needs is FileNeeds => !!needs && !needs.keys?.length;

/**
 * It can share an account with another lane: it sends no message (the account's quota is the
 * quota check's), sends every request paced, empties no bucket and judges each answer on its own.
 */
const sharesAnAccount = (needs: FileNeeds) =>
  !needs.sendsMessages && !needs.sendsUnpaced && !needs.emptiesBuckets && !needs.readsRemainingAcrossAnswers;

/** The lane a file runs in, among `lanes`: the quota lane's files run in the other lane when there is none. */
export function laneOfNeeds(needs: FileNeeds | undefined, lanes: readonly Lane[] = ["main", "other", "quota"]): Lane {
  if (!needsOnlyAMainKey(needs)) return "main";
  return sharesAnAccount(needs) && lanes.includes("quota") ? "quota" : "other";
}

/**
 * Whether a file of the main lane starts only once the quota lane has ended: it creates agents in
 * the quota account (standing in as another account; the quota lane's lists must see only their
 * own) or spends its quota and counts its X-RateLimit-Remaining from one answer to the next.
 */
export const waitsForQuotaLane = (needs: FileNeeds | undefined) => !!needs?.createsAgentsInOtherAccount || !!needs?.spendsQuota;

/**
 * A lane's files in a fixed order (the calibration counts them in the order the run sends them):
 * those after the quota lane last, the quota spender last of all — before it, the quota account
 * stands in as another account, and PROFILE §3 lets a spent quota's 429 INSUFFICIENT_QUOTA answer
 * a message to another account's agent as well as its 404 — and by name within each.
 */
export function laneFileOrder(needsOf: NeedsOf): (a: string, b: string) => number {
  const rank = (file: string) => {
    const needs = needsOf(file);
    return needs?.spendsQuota ? 2 : waitsForQuotaLane(needs) ? 1 : 0;
  };
  const nameOf = (file: string) => file.replace(/\\/g, "/").replace(/\.(ts|js)$/, "");
  return (a, b) => rank(a) - rank(b) || nameOf(a).localeCompare(nameOf(b));
}

/**
 * The main lane's part of each bucket of the quota account while the quota lane runs there
 * (src/client/rate-share.ts): a third of the smallest endpoint bucket (Create's and Delete's 10),
 * so that the quota lane keeps two thirds of every bucket for its own files, and of the tier the
 * sum of those parts over the endpoint buckets: all the main lane can send there in a window. The
 * main lane sends there only its isolation checks' requests (a read or a refused create of the
 * quota account standing in as another account) until its last files, which wait for the quota
 * lane's end.
 */
const ENDPOINT_BUCKETS = Object.values(RATE_LIMITS.perKeyEndpoint);
const GUEST_ENDPOINT_PART = Math.floor(Math.min(...ENDPOINT_BUCKETS) / 3);
export const GUEST_SHARE = { tier: GUEST_ENDPOINT_PART * ENDPOINT_BUCKETS.length, endpoint: GUEST_ENDPOINT_PART } as const;

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

/** The lanes the accounts given allow, or none: a third lane on the quota account needs the tier (--tier), so that it can keep to its share of it, and a tier well above the main lane's part. */
function accountLanesOf(target: HarnessTarget): Lane[] | undefined {
  if (!usesAccountLanes(target)) return undefined;
  const tier = target.tierLimit;
  return tier !== undefined && tier > 2 * GUEST_SHARE.tier ? ["main", "other", "quota"] : ["main", "other"];
}

/**
 * The lanes of a run whose files need `needs` (one entry per file; undefined for a file that
 * declared nothing), or none: of the lanes the accounts allow, those some file runs in. A lane
 * with no file does not start, and no lane keeps to a share of an account no other lane uses.
 */
export function lanesOf(target: HarnessTarget, needs: readonly (FileNeeds | undefined)[]): Lane[] | undefined {
  const allowed = accountLanesOf(target);
  return allowed?.filter((lane) => needs.some((n) => laneOfNeeds(n, allowed) === lane));
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
export function laneTarget(target: HarnessTarget, lane: Lane, lanes: readonly Lane[]): HarnessTarget {
  // a key in several key sets keeps the labels of the last, as when they were assigned in turn
  const labels = Object.fromEntries((target.keyPool ?? [target.keys]).flatMap((keys) => Object.entries(keyLabelsOf(keys))));
  // the main and quota lanes use one quota key when there are not key sets enough for each lane its own
  const shared =
    lanes.includes("quota") && lanes.includes("main") && (target.keyPool?.length ?? 1) < lanes.length && lane !== "other";
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

/** The accounts two of `lanes` share, for the plan: the quota account, its lane the host, the main lane the guest. */
export function planShares(lanes: readonly string[]): PlanLimits["shares"] {
  return lanes.includes("quota") && lanes.includes("main")
    ? { [KEY_ROLES.quota.account]: { host: "quota", guest: GUEST_SHARE } }
    : undefined;
}
