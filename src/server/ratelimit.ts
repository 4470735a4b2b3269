import { type EndpointSpec, RATE_LIMITS } from "../contract/index.js";
import type { Clock } from "./clock.js";
import type { Principal } from "./keyring.js";

/** One fixed window, started by the bucket's first counted request (PROFILE §7 Reference). */
interface Window {
  count: number;
  resetAt: number;
}

/** One bucket a request is counted in; `key` is opaque, `scope` says which PROFILE §7 bucket it is. */
export interface RateBucket {
  scope: "keyEndpoint" | "agentMessages" | "tier";
  key: string;
  size: number;
}

/**
 * PROFILE §7: the endpoint's own bucket first (it wins ties when reporting), then the agent's
 * message bucket, shared by all keys of its account (another account cannot drain it), then the tier.
 * Without an agent's bucket the list depends on the key and endpoint alone: made once, so the
 * bucket keys are the same strings every request (their hashes cached, no concatenation).
 */
export function rateBucketsOf(principal: Principal, endpoint: EndpointSpec | undefined, agentId: string): readonly RateBucket[] {
  let byEndpoint = bucketLists.get(principal);
  if (!byEndpoint) {
    byEndpoint = new Map();
    bucketLists.set(principal, byEndpoint);
  }
  // Stryker disable next-line StringLiteral: only the cache key of the bucket list for requests no route has
  const id = endpoint?.id ?? "";
  const known = byEndpoint.get(id);
  if (known) return known;
  const tier: RateBucket = {
    // Stryker disable next-line StringLiteral: `scope` is read only by fault hooks (seam)
    scope: "tier",
    key: `t:${principal.account.id}`,
    size: principal.account.tierLimit,
  };
  if (endpoint?.bucket.kind === "agentMessages")
    // Stryker disable next-line StringLiteral: `scope` is read only by fault hooks (seam)
    return [{ scope: "agentMessages", key: agentSlotKey(principal, agentId), size: endpoint.bucket.size }, tier];
  const buckets: RateBucket[] =
    endpoint?.bucket.kind === "keyEndpoint"
      ? [
          {
            // Stryker disable next-line StringLiteral: `scope` is read only by fault hooks (seam)
            scope: "keyEndpoint",
            key: `k:${principal.keyHash}:${endpoint.id}`,
            size: endpoint.bucket.size,
          },
          tier,
        ]
      : [tier];
  byEndpoint.set(id, buckets);
  return buckets;
}
const bucketLists = new WeakMap<Principal, Map<string, readonly RateBucket[]>>();

/** The agent's message bucket and concurrency slots are per (account, agent). */
export const agentSlotKey = (principal: Principal, agentId: string) => `a:${principal.account.id}:${agentId}`;

export interface BucketState {
  size: number;
  remaining: number;
  resetAt: number;
}

/** An admitted request's buckets are described when its answer leaves (the guard's onSend), not here. */
type Admission = { readonly admitted: true } | { admitted: false; headers: BucketState; retryAfterSeconds: number };
const ADMITTED: Admission = { admitted: true };

/**
 * PROFILE §7 buckets. `admit` counts one request in every bucket it belongs to, or in none
 * when any is empty (a 429 has no effect and is counted nowhere).
 */
export class RateLimiter {
  private readonly windows = new Map<string, Window>();
  private readonly windowMs: number;
  private sweepAt = 0;

  constructor(
    private readonly clock: Clock,
    windowSeconds: number,
    /**
     * PROFILE §7 leaves a window's start to the service: the reference starts it at the bucket's
     * first counted request; with `wholeSecond` it starts on the whole second that request fell in,
     * as services that keep windows on their clock's seconds do (a window then ends up to 1 s
     * sooner than W after the request that opened it)
     */
    private readonly windowStart: "first-request" | "whole-second" = "first-request",
  ) {
    this.windowMs = windowSeconds * 1000;
  }

  /** When a window opened now ends. */
  private windowEnd(now: number): number {
    return (this.windowStart === "whole-second" ? Math.floor(now / 1000) * 1000 : now) + this.windowMs;
  }

  private current(key: string, now: number): Window | undefined {
    const w = this.windows.get(key);
    if (w && w.resetAt <= now) {
      this.windows.delete(key);
      return undefined;
    }
    return w;
  }

  /**
   * The first bucket is the endpoint's own: it wins ties when choosing which to report. Runs on
   * every request: plain loops, and no object but the answer of a 429 (the reference must not be
   * what bounds a load run: `npm run bench`).
   */
  admit(buckets: readonly RateBucket[]): Admission {
    const now = this.clock.now();
    this.sweep(now);
    // the empty bucket that refills last, so Retry-After and X-RateLimit-Reset agree
    let last: BucketState | undefined;
    for (const b of buckets) {
      const w = this.current(b.key, now);
      // Stryker disable next-line ArithmeticOperator,LogicalOperator: only an empty bucket's reset is used, and a bucket without a window is never empty
      const resetAt = w?.resetAt ?? this.windowEnd(now);
      if ((w?.count ?? 0) >= b.size && (!last || resetAt > last.resetAt)) last = { size: b.size, remaining: 0, resetAt };
    }
    // Retry-After: whole seconds until that bucket refills, at least 1
    if (last) return { admitted: false, headers: last, retryAfterSeconds: Math.max(1, Math.ceil((last.resetAt - now) / 1000)) };
    for (const b of buckets) {
      const w = this.windows.get(b.key); // current() above dropped the windows that had ended
      if (w) w.count++;
      else this.windows.set(b.key, { count: 1, resetAt: this.windowEnd(now) });
    }
    return ADMITTED;
  }

  /** The state of the bucket with the fewest remaining requests, the first on a tie. */
  tightest(buckets: readonly RateBucket[], now = this.clock.now()): BucketState {
    let best: RateBucket | undefined;
    let bestRemaining = 0;
    let bestResetAt = 0;
    for (const b of buckets) {
      const w = this.current(b.key, now);
      const remaining = w ? Math.max(0, b.size - w.count) : b.size;
      if (!best || remaining < bestRemaining) {
        best = b;
        bestRemaining = remaining;
        bestResetAt = w ? w.resetAt : this.windowEnd(now);
      }
    }
    // Stryker disable next-line StringLiteral: every request has at least its tier bucket: unreachable
    if (!best) throw new Error("no bucket");
    return { size: best.size, remaining: bestRemaining, resetAt: bestResetAt };
  }

  /** Drop windows that have ended, at most once per window length. */
  // Stryker disable next-line BlockStatement: ended windows kept in memory: each is dropped when next looked at anyway
  private sweep(now: number): void {
    // Stryker disable next-line ConditionalExpression,EqualityOperator: the sweep only frees memory: an ended window is dropped when next looked at anyway, and a live one is never swept (checked: current() tests resetAt itself)
    if (now < this.sweepAt) return;
    // Stryker disable next-line ArithmeticOperator: the sweep only frees memory: an ended window is dropped when next looked at anyway, and a live one is never swept (checked: current() tests resetAt itself)
    this.sweepAt = now + this.windowMs;
    // Stryker disable next-line ConditionalExpression,EqualityOperator: the sweep only frees memory: an ended window is dropped when next looked at anyway, and a live one is never swept (checked: current() tests resetAt itself)
    for (const [key, w] of this.windows) if (w.resetAt <= now) this.windows.delete(key);
  }
}

/** In-flight Send Message slots per agent (PROFILE §7 Concurrency). */
export class ConcurrencyGate {
  private readonly inFlight = new Map<string, number>();

  available(key: string): boolean {
    return (this.inFlight.get(key) ?? 0) < RATE_LIMITS.messageConcurrency;
  }

  tryAcquire(key: string): (() => void) | undefined {
    const n = this.inFlight.get(key) ?? 0;
    if (n >= RATE_LIMITS.messageConcurrency) return undefined;
    this.inFlight.set(key, n + 1);
    let released = false;
    return () => {
      if (released) return;
      // Stryker disable next-line BooleanLiteral: each release is registered once (reply.raw.once("close")): the double-release guard never decides
      released = true;
      const left = (this.inFlight.get(key) ?? 1) - 1;
      if (left <= 0) this.inFlight.delete(key);
      else this.inFlight.set(key, left);
    };
  }
}
