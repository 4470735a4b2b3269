import type { AccountShare } from "../client/rate-share.js";
import type { ServiceClock } from "../client/service-clock.js";
import { type KeysFileInput, newApiKey, RATE_LIMITS } from "../contract/index.js";
import { pinThisProcess, splitCores } from "./cores.js";
import type { ReferencePlan } from "./reference-plan.js";

export { EMBEDDED_DEFAULTS, type ReferencePlan } from "./reference-plan.js";

import { KEY_ROLE_NAMES, KEY_ROLES, type KeyRole, type KeyRoleName, keysOfRole, keysOfSet } from "./key-roles.js";
import type { ReferenceServerOptions, StartedTargetKind } from "./types.js";

/**
 * What the suites know of the service under test. The CLI resolves it and hands it to vitest
 * through `provide`; the suites read it with `inject("target")`. Plain JSON.
 */
export interface HarnessTarget {
  kind: StartedTargetKind | "external";
  /** an embedded reference in a `serve` process of its own (a load that floods it): the generator's loop is not the service's */
  ownProcess?: boolean;
  /**
   * the service on CPUs of its own, the generator on the others (src/target/cores.ts): its CPUs
   * and processes, to measure what else ran on them while a flood lasted. A reference `load`
   * starts apart, or a deployment on this machine named by `load --service-cores`.
   */
  ownCores?: { cpus: number[]; pids: number[] };
  /** ends with /v1 */
  baseUrl: string;
  keys: {
    /** all four permissions */
    main: string;
    /** agents:read only — enables the 403 checks */
    readOnly?: string;
    /** a key of a second account — enables the isolation checks */
    otherAccount?: string;
    /** a key of an account with a small message quota — enables the quota check */
    quota?: string;
    /**
     * a key (all four permissions) of an account no check ever creates an agent in, on reference
     * targets the harness starts: a request there meets an account the server has never stored an
     * agent for (mutation testing: an unguarded lookup of such an account survived every check)
     */
    agentless?: string;
    /**
     * every key of the main account with all four permissions, `main` first (`--api-key` given
     * several times): the checks take them in turn, so per-key buckets are spread over them
     */
    mainKeys?: string[];
    /** load scenarios: a key of an account of its own whose tier never masks an endpoint bucket */
    load?: string;
    /** load scenarios: a key of an account of its own with a small tier, for the tier burst */
    tierBurst?: string;
    /**
     * load scenarios: a quota account of their own on reference targets, so the quick load
     * scenarios never spend the quota the functional check counts unit by unit (same worker)
     */
    loadQuota?: string;
    /**
     * keys (all four permissions) of an account of its own with a large tier, on reference
     * targets the harness starts: the property suites spread per-key buckets over them and
     * model the whole account, so no other check's request can change what the model predicts
     */
    propertyKeys?: string[];
  };
  /**
   * Key sets of separate accounts, one per parallel worker (a target the harness starts): a
   * worker takes `keyPool[VITEST_POOL_ID - 1]` as its `keys`, so parallel files never share a
   * bucket or an agent. `keys` is the first set.
   */
  keyPool?: HarnessTarget["keys"][];
  /** rate-limit window W, seconds (PROFILE §11) */
  windowSeconds: number;
  /** Send Message time budget, seconds (PROFILE §11) */
  messageTimeoutSeconds: number;
  /** the main account's tier limit per window, when known — enables the tier check */
  tierLimit?: number;
  /** tier limits of the load scenarios' accounts (keys.load, keys.tierBurst), when known */
  loadTiers?: { load?: number; tierBurst?: number };
  /** the quota account's message quota, when known (a reference target the harness started) */
  messageQuota?: number;
  /** the target is reference-compatible (PROFILE §10): mock models and quota checks may run */
  referenceFaults: boolean;
  /** the identifier field's name (PROFILE §11) */
  idField: string;
  /** the service's clock as estimated before the first check (src/client/service-clock.ts) */
  serviceClock?: ServiceClock;
  /**
   * where the run hands the service's clock over when it estimates it while the workers start
   * (src/client/clock-handover.ts): a worker without `serviceClock` reads it there
   */
  serviceClockFile?: string;
  /** every agent the run creates has a name starting with this */
  runPrefix: string;
  /** JSON-lines file where every created agent is recorded for cleanup */
  ledgerFile: string;
  /**
   * the run spends two accounts' tiers side by side (src/plan/lanes.ts); set for a plan's
   * calibration run, whose embedded reference stands in for a deployment that does
   */
  accountLanes?: boolean;
  /** the lane this target is (src/plan/lanes.ts): each lane's workers claim their key sets apart */
  lane?: "main" | "other" | "quota";
  /** by account label: accounts another lane uses too, and this lane's side of them (src/client/rate-share.ts) */
  accountShares?: Record<string, AccountShare>;
  /** a file that appears once the quota lane has ended: the main lane's last files wait for it (src/plan/lanes.ts) */
  afterQuotaLane?: string;
  /**
   * inside a lane: every key of the run with its role and account, as given (a lane's `keys` swap
   * accounts): what a footprint, a curl line and the leak check name it by
   */
  keyLabels?: Record<string, KeyLabel>;
  /** a calibration run: JSON-lines file where every request is recorded with its buckets (src/plan) */
  footprintFile?: string;
  seed: number;
  /** the property suites' request budget (`--max-requests`) and the case to replay (`--replay`) */
  property?: { maxRequests?: number; replay?: PropertyReplay };
}

/** How a run names a key: its role, its account, and its label in a plan's footprint. */
export interface KeyLabel {
  role: KeyRoleName;
  account: string;
  /** `main#0` …, or the role */
  footprint: string;
}

/** A shrunk failure of a property suite, as written to the report folder and read by `--replay`. */
export interface PropertyReplay {
  /** the property's title */
  property: string;
  seed: number;
  /** fast-check's path to the shrunk case */
  path: string;
  /** fast-check's replay path of a command sequence (stateful properties) */
  replayPath?: string;
  /**
   * the options that shape the generators, as the failing run had them: `--max-requests` (a
   * budgeted run draws shorter sequences and smaller populations) and whether the target honoured
   * the reference's mock models (--reference-faults: which models a body may name)
   */
  maxRequests?: number;
  referenceFaults?: boolean;
}

/**
 * The property suites' request budget on a deployment unless `--max-requests` says otherwise:
 * 3 minutes of the tier (PROFILE §7: tier requests per window W) — in a run with account lanes
 * (src/plan/lanes.ts), the room the other lane has beside its functional files while the main
 * lane's take their windows, so the suites add cases, not minutes. A calibration run (src/plan)
 * gives its embedded reference the same budget, so the plan counts what the run sends.
 */
export const PROPERTY_BUDGET_SECONDS = 180;

export function deploymentPropertyRequests(target: Pick<HarnessTarget, "windowSeconds" | "tierLimit">): number {
  return Math.floor((PROPERTY_BUDGET_SECONDS / target.windowSeconds) * (target.tierLimit ?? RATE_LIMITS.tiers.standard));
}

/**
 * The property suites' account on reference targets: keys enough to spread per-key buckets. The
 * stateful sequences patch a few agents again and again; over 16 keys they emptied keys' Update
 * buckets (30 a window) and waited out 8.5 s of their 22 s for windows to end; over 32, none
 * (docs/figures.md).
 */
const PROPERTY_KEYS = 32;

/**
 * Tiers of the accounts whose tier is not the plan's, by role: the load scenarios' own accounts,
 * an enterprise tier far above any burst (PROFILE §7 "enterprise: set per account") and a tier
 * below the sum of the endpoint buckets so that a mixed burst empties the tier first; and the
 * property suites' account, a tier no run reaches.
 */
const LOAD_TIERS = { load: 1_000_000, tierBurst: 100 } as const;
const ROLE_TIERS: Partial<Record<KeyRoleName, number>> = { ...LOAD_TIERS, propertyKeys: 100_000 };
const loadTiersOf = (plan: ReferencePlan) => ({
  ...LOAD_TIERS,
  ...(plan.tierBurstTier !== undefined ? { tierBurst: plan.tierBurstTier } : {}),
});
const tierOf = (plan: ReferencePlan, role: KeyRoleName): number =>
  (role === "tierBurst" ? loadTiersOf(plan).tierBurst : ROLE_TIERS[role]) ?? plan.tierLimit;

/**
 * The accounts and keys a full verification needs, one account per account of the key-role
 * table (src/target/key-roles.ts), each key holding exactly its role's permissions: one such set
 * per worker, each its own accounts but those of roles shared by every set (one account, one key).
 */
export function referenceKeys(plan: ReferencePlan): { file: KeysFileInput; keys: HarnessTarget["keys"][] } {
  const file: KeysFileInput = { accounts: [], keys: [] };
  const sets: HarnessTarget["keys"][] = [];
  const sharedKeys = new Map<KeyRoleName, string>();
  /** a role's key in a set: one for every set when the role is shared by the sets */
  const keyOf = (role: KeyRoleName) => {
    const row: KeyRole = KEY_ROLES[role];
    if (!row.sharedBySets) return newApiKey();
    if (!sharedKeys.has(role)) sharedKeys.set(role, newApiKey());
    return sharedKeys.get(role)!;
  };
  const accounts = new Map<string, KeysFileInput["accounts"][number]>();
  const keysGiven = new Set<string>();
  for (let w = 1; w <= Math.max(1, plan.workers ?? 1); w++) {
    const mainKeys = Array.from({ length: Math.max(1, plan.mainKeys ?? 1) }, () => newApiKey());
    const keys = {
      main: mainKeys[0]!,
      mainKeys,
      readOnly: keyOf("readOnly"),
      otherAccount: keyOf("otherAccount"),
      quota: keyOf("quota"),
      agentless: keyOf("agentless"),
      load: keyOf("load"),
      tierBurst: keyOf("tierBurst"),
      loadQuota: keyOf("loadQuota"),
      propertyKeys: Array.from({ length: PROPERTY_KEYS }, () => newApiKey()),
    } satisfies Required<HarnessTarget["keys"]>;
    for (const role of KEY_ROLE_NAMES) {
      const row: KeyRole = KEY_ROLES[role];
      const suffix = w === 1 || row.sharedBySets ? "" : `_${w}`;
      const id = `acct_${row.account.replace(/-/g, "_")}${suffix}`;
      if (!accounts.has(id))
        accounts.set(id, { id, tierLimit: tierOf(plan, role), messageQuota: row.smallQuota ? plan.quota : null });
      // PROFILE §6: each key holds exactly its role's permissions
      for (const key of keysOfRole(keys, role))
        if (!keysGiven.has(key)) {
          keysGiven.add(key);
          file.keys.push({ key, account: id, permissions: [...row.permissions] });
        }
    }
    sets.push(keys);
  }
  file.accounts.push(...accounts.values());
  file.accounts.push(...(plan.tenants?.accounts ?? []));
  file.keys.push(...(plan.tenants?.keys ?? []));
  return { file, keys: sets };
}

/** The target as one parallel worker sees it: its own key set from the pool (worker ids start at 1). */
export function workerTarget(target: HarnessTarget, workerId: number): HarnessTarget {
  const pool = target.keyPool;
  if (!pool?.length) return target;
  return { ...target, keys: pool[(Math.max(1, workerId) - 1) % pool.length]! };
}

/**
 * Every secret a target holds, each once: every key of every key set (`keys` and the worker
 * pool), the keys a lane names by label, and the keys of any tenants the run serves. The one list
 * that every report, replay and recorder scrubs (PROFILE §6: a key never appears in what we write).
 */
export function targetSecrets(
  target: Pick<HarnessTarget, "keys" | "keyPool" | "keyLabels">,
  tenants?: { keys: readonly { key: string }[] },
): string[] {
  return [
    ...new Set([
      ...[target.keys, ...(target.keyPool ?? [])].flatMap(keysOfSet),
      ...Object.keys(target.keyLabels ?? {}),
      ...(tenants?.keys ?? []).map((k) => k.key),
    ]),
  ];
}

/** How many keys of each role a key set holds, for a report: the roles, never the keys. */
export function keyRoles(keys: HarnessTarget["keys"]): Record<string, number> {
  return Object.fromEntries(KEY_ROLE_NAMES.map((role) => [role, keysOfRole(keys, role).length]).filter(([, count]) => count));
}

/** The reference in this process, or in a container. */
async function startHere(kind: StartedTargetKind, options: ReferenceServerOptions) {
  if (kind === "container") return (await import("./container.js")).startReferenceContainer(options);
  return (await import("./embedded.js")).startReferenceServer(options);
}

/**
 * The reference in a `serve` process of its own, on CPUs of its own where the machine allows
 * (src/target/cores.ts): this process keeps the others until the server is closed.
 */
async function startApart(options: ReferenceServerOptions) {
  const cores = splitCores();
  const server = await (await import("./process.js")).startReferenceProcess(options, cores?.service);
  // the split holds only if this process moved off the service's CPUs too
  const unpin = cores && pinThisProcess(cores.generator);
  return {
    ...server,
    cores: unpin ? cores : undefined,
    close: async () => {
      unpin?.();
      await server.close();
    },
  };
}

/** Start a reference server (in-process or container) with everything a full run needs. */
export async function startReferenceTarget(
  kind: StartedTargetKind,
  plan: ReferencePlan,
  run: { runPrefix: string; ledgerFile: string; seed: number },
  /** embedded only: in a `serve` process of its own rather than this one (a load that floods it) */
  apart = false,
): Promise<{ target: HarnessTarget; stop: () => Promise<void> }> {
  const { file, keys: keyPool } = referenceKeys(plan);
  const options = {
    keys: file,
    windowSeconds: plan.windowSeconds,
    messageTimeoutSeconds: plan.messageTimeoutSeconds,
    faults: plan.faults,
    ...(plan.clockSkewSeconds ? { clockSkewSeconds: plan.clockSkewSeconds } : {}),
  };
  const own = apart && kind === "embedded" ? await startApart(options) : undefined;
  const server = own ?? (await startHere(kind, options));
  return {
    target: {
      kind,
      ...(own ? { ownProcess: true, ...(own.cores ? { ownCores: { cpus: own.cores.service, pids: [own.pid] } } : {}) } : {}),
      baseUrl: server.baseUrl,
      keys: keyPool[0]!,
      ...(keyPool.length > 1 ? { keyPool } : {}),
      windowSeconds: plan.windowSeconds,
      messageTimeoutSeconds: plan.messageTimeoutSeconds,
      tierLimit: plan.tierLimit,
      messageQuota: plan.quota,
      loadTiers: loadTiersOf(plan),
      referenceFaults: true,
      idField: "id",
      ...run,
    },
    stop: () => server.close(),
  };
}

/** A run prefix for agent names: recognisable, unique per run, and safe in a name. */
export function runPrefixFor(runId: string): string {
  return `ah-${runId}-`;
}

/** The prefix every run prefix shares, for `agent-harness cleanup`. */
export const HARNESS_NAME_PREFIX = "ah-";

/** A name some run of the harness made (`ah-<run id>-…`, the run id starting with its UTC date). */
export const RUN_NAME_PATTERN = /^ah-\d{4}-\d{2}-\d{2}T/;
