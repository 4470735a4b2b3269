import { type KeysFileInput, MESSAGE_TIMING, RATE_LIMITS } from "../contract/index.js";

/*
 * What a reference target the harness starts is made of, and its defaults: a module of its own,
 * free of the targets' code, so the CLI's options (their help gives the defaults) and the
 * reference server's bundle can read it without the container support that starting one needs.
 */

/** Start options for reference targets the harness starts itself. */
export interface ReferencePlan {
  windowSeconds: number;
  messageTimeoutSeconds: number;
  tierLimit: number;
  quota: number;
  faults: string[];
  /** parallel workers, each with its own accounts and keys (default 1) */
  workers?: number;
  /** keys of each main account with all four permissions (default 1) */
  mainKeys?: number;
  /** the server's clock this many seconds ahead of the machine's (behind when negative) */
  clockSkewSeconds?: number;
  /** more accounts and keys to serve besides the harness's own (load capacity's tenants) */
  tenants?: KeysFileInput;
  /**
   * the small-tier account's tier (keys.tierBurst), when not the reference's own: a calibration
   * shaped like a deployment given --tier-burst-tier skips and runs what the run will
   */
  tierBurstTier?: number;
}

/** Fast defaults for a reference server the harness starts: short window and budget. */
export const EMBEDDED_DEFAULTS: ReferencePlan = {
  windowSeconds: 2,
  // mock-slow answers in about 2 s: 2.5 s of slack, for parallel workers on a busy machine
  messageTimeoutSeconds: MESSAGE_TIMING.slowModelSeconds + 2.5,
  tierLimit: RATE_LIMITS.tiers.pro,
  quota: 3,
  faults: [],
  // mostly waiting on windows and budgets, not computing: more workers than cores pay off. Six
  // took the default run's median from 33.6 to 32.0 s wall on two cores (docs/figures.md); seven
  // were not kept: three runs at once (the meta repeat test) then starved a drain, CI grew by 30 s,
  // and a verify run's accounts (seven a worker and one shared) would reach what wakes the
  // many-tenant faults (MANY_TENANTS)
  workers: 6,
  // the Create bucket (10 per key) paces the create checks: three keys, three buckets
  mainKeys: 3,
};
