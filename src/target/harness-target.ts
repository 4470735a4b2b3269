import { type KeysFileInput, MESSAGE_TIMING, newApiKey, PERMISSIONS, RATE_LIMITS } from "../contract/index.js";
import type { StartedReference } from "./types.js";

/**
 * What the suites know of the service under test. The CLI resolves it and hands it to vitest
 * through `provide`; the suites read it with `inject("target")`. Plain JSON.
 */
export interface HarnessTarget {
  kind: "embedded" | "container" | "external";
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
  };
  /** rate-limit window W, seconds (PROFILE §11) */
  windowSeconds: number;
  /** Send Message time budget, seconds (PROFILE §11) */
  messageTimeoutSeconds: number;
  /** the main account's tier limit per window, when known — enables the tier check */
  tierLimit?: number;
  /** the quota account's message quota, when known (a reference target the harness started) */
  messageQuota?: number;
  /** the target is reference-compatible (PROFILE §10): mock models and quota checks may run */
  referenceFaults: boolean;
  /** the identifier field's name (PROFILE §11) */
  idField: string;
  /** every agent the run creates has a name starting with this */
  runPrefix: string;
  /** JSON-lines file where every created agent is recorded for cleanup */
  ledgerFile: string;
  seed: number;
}

/** Start options for reference targets the harness starts itself. */
export interface ReferencePlan {
  windowSeconds: number;
  messageTimeoutSeconds: number;
  tierLimit: number;
  quota: number;
  faults: string[];
}

/** Fast defaults for a reference server the harness starts: short window and budget. */
export const EMBEDDED_DEFAULTS: ReferencePlan = {
  windowSeconds: 2,
  messageTimeoutSeconds: MESSAGE_TIMING.slowModelSeconds + 1.5,
  tierLimit: RATE_LIMITS.tiers.pro,
  quota: 3,
  faults: [],
};

/** The accounts and keys a full verification needs: main, read-only, another account, a quota account. */
export function referenceKeys(plan: ReferencePlan): { file: KeysFileInput; keys: HarnessTarget["keys"] } {
  const keys = { main: newApiKey(), readOnly: newApiKey(), otherAccount: newApiKey(), quota: newApiKey() };
  return {
    keys,
    file: {
      accounts: [
        { id: "acct_main", tierLimit: plan.tierLimit, messageQuota: null },
        { id: "acct_other", tierLimit: plan.tierLimit, messageQuota: null },
        { id: "acct_quota", tierLimit: plan.tierLimit, messageQuota: plan.quota },
      ],
      keys: [
        { key: keys.main, account: "acct_main", permissions: [...PERMISSIONS] },
        { key: keys.readOnly, account: "acct_main", permissions: ["agents:read"] },
        { key: keys.otherAccount, account: "acct_other", permissions: [...PERMISSIONS] },
        { key: keys.quota, account: "acct_quota", permissions: [...PERMISSIONS] },
      ],
    },
  };
}

export type ReferenceStarter = (options: {
  keys: KeysFileInput;
  windowSeconds: number;
  messageTimeoutSeconds: number;
  faults: string[];
}) => Promise<StartedReference>;

/** Start a reference server (in-process or container) with everything a full run needs. */
export async function startReferenceTarget(
  kind: "embedded" | "container",
  plan: ReferencePlan,
  run: { runPrefix: string; ledgerFile: string; seed: number },
): Promise<{ target: HarnessTarget; stop: () => Promise<void> }> {
  const { file, keys } = referenceKeys(plan);
  const start: ReferenceStarter =
    kind === "embedded"
      ? (await import("./embedded.js")).startReferenceServer
      : (await import("./container.js")).startReferenceContainer;
  const server = await start({
    keys: file,
    windowSeconds: plan.windowSeconds,
    messageTimeoutSeconds: plan.messageTimeoutSeconds,
    faults: plan.faults,
  });
  return {
    target: {
      kind,
      baseUrl: server.baseUrl,
      keys,
      windowSeconds: plan.windowSeconds,
      messageTimeoutSeconds: plan.messageTimeoutSeconds,
      tierLimit: plan.tierLimit,
      messageQuota: plan.quota,
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
