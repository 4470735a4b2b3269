import { type KeysFile, MESSAGE_TIMING, RATE_LIMITS } from "../contract/index.js";
import { type Clock, skewedClock, systemClock } from "./clock.js";
import { KeyRing, type Principal } from "./keyring.js";
import { ConcurrencyGate, RateLimiter } from "./ratelimit.js";
import { cleanSeam, type FaultSeam } from "./seam.js";
import { AgentStore } from "./store.js";

export interface BuildOptions {
  keys: KeysFile;
  windowSeconds?: number;
  /** where a rate window starts (PROFILE §7 leaves it open): the bucket's first counted request (default), or the whole second it fell in */
  windowStart?: "first-request" | "whole-second";
  messageTimeoutSeconds?: number;
  clock?: Clock;
  /** the server's clock this many seconds ahead of `clock` (behind when negative): see skewedClock */
  clockSkewSeconds?: number;
  /** injected defects by name, for proving the harness catches them (faults/) */
  faults?: readonly string[];
}

/** Everything a route or plugin needs, built once per server. */
export class ServerContext {
  readonly keyRing: KeyRing;
  readonly store: AgentStore;
  readonly limiter: RateLimiter;
  readonly gate = new ConcurrencyGate();
  readonly clock: Clock;
  /** where injected faults install; the clean server leaves it as it is */
  readonly seam: FaultSeam = cleanSeam();
  /** message units spent per account (PROFILE §7 Quota) */
  private readonly quotaSpent = new Map<string, number>();
  /** the options without the keys: PROFILE §6 Reference keeps only their SHA-256 (in keyRing) */
  readonly options: {
    readonly windowSeconds: number;
    readonly messageTimeoutSeconds: number;
    /** heartbeat comment interval on silent streams; PROFILE §5 asks for at most 15 s */
    readonly heartbeatMs: number;
  };

  constructor(options: BuildOptions) {
    const windowSeconds = options.windowSeconds ?? RATE_LIMITS.defaultWindowSeconds;
    const messageTimeoutSeconds = options.messageTimeoutSeconds ?? MESSAGE_TIMING.defaultBudgetSeconds;
    // comfortably inside the 15 s PROFILE allows, and inside short test budgets too
    this.options = { windowSeconds, messageTimeoutSeconds, heartbeatMs: Math.min(10_000, (messageTimeoutSeconds * 1000) / 3) };
    this.keyRing = new KeyRing(options.keys);
    this.clock = skewedClock(options.clock ?? systemClock, (options.clockSkewSeconds ?? 0) * 1000);
    this.store = new AgentStore(this.clock);
    this.limiter = new RateLimiter(this.clock, windowSeconds, options.windowStart);
  }

  /** Spend one message unit; false when the quota is already spent. */
  spendQuota(principal: Principal): boolean {
    const quota = principal.account.messageQuota;
    const spent = this.quotaSpent.get(principal.account.id) ?? 0;
    if (quota !== null && spent >= quota) return false;
    this.quotaSpent.set(principal.account.id, spent + 1);
    return true;
  }
}

declare module "fastify" {
  interface FastifyRequest {
    principal: Principal;
    /** the buckets the request was counted in, to describe them again when the answer leaves */
    rateBuckets?: readonly import("./ratelimit.js").RateBucket[];
  }
  interface FastifyContextConfig {
    /** the ENDPOINTS id of the route, for permissions and rate buckets */
    endpoint?: import("../contract/index.js").EndpointId;
    /** no auth, no rate limit (GET /health) */
    public?: boolean;
  }
}
