import { type EndpointSpec, isCountedInBuckets, RATE_LIMITS } from "../contract/index.js";
import { type Clock, systemClock } from "./clock.js";
import type { RateHeaders } from "./rate.js";
import { type AccountShare, SlidingCap, shareCap } from "./rate-share.js";
import type { Refusal, RoomRefusal } from "./refusal.js";

/**
 * Pacing so a full verification against a real deployment never trips a PROFILE §7 limit by
 * accident. Buckets are learnt from the `X-RateLimit-*` headers of each answer and counted
 * locally between answers; a request that would find a bucket empty waits for that bucket's
 * `X-RateLimit-Reset` (plus a margin for clock skew) — never a guessed sleep.
 */

/** A bucket of the endpoint table: `keyEndpoint:<endpoint>` or `agentMessages:<agentId>`, and its size. */
export interface BucketRef {
  name: string;
  size: number;
}

/** The account-wide bucket every authenticated request counts in (PROFILE §7). */
const TIER_BUCKET = "tier";

/** The endpoint's own bucket, as ENDPOINTS names it. */
export function endpointBucket(spec: EndpointSpec, agentId?: string): BucketRef {
  const b = spec.bucket;
  return b.kind === "keyEndpoint"
    ? { name: `keyEndpoint:${b.endpoint}`, size: b.size }
    : { name: `agentMessages:${agentId ?? ""}`, size: b.size };
}

export interface PaceRequest {
  /** the key's fingerprint (never the key) */
  key: string;
  /** an account label shared by that account's keys; per-agent and tier buckets are the account's */
  account?: string | undefined;
  /** the tier limit, when the harness is configured with it (PROFILE §11); learnt otherwise */
  tierLimit?: number | undefined;
  /** the endpoint's bucket; absent for a path no endpoint matches (it counts in the tier only) */
  bucket?: BucketRef | undefined;
}

/** What an answer tells the budget. */
export interface PaceAnswer {
  status: number;
  /** `error.code` of the body, when it has one */
  code?: string | undefined;
  rate?: RateHeaders | undefined;
  /** clock time the answer arrived */
  receivedAt: number;
}

export interface PaceWait {
  /** `<scope>/<bucket>`; the scope is a fingerprint or account label, never a key */
  bucket: string;
  waitMs: number;
  reason: "empty until reset" | "awaiting an answer to learn the bucket" | "after exhaustion" | "within this side's share";
}

export interface BucketSnapshot {
  scope: string;
  name: string;
  size: number | undefined;
  remaining: number | undefined;
  resetAt: number | undefined;
  inFlight: number;
}

export interface RateBudgetOptions {
  clock?: Clock;
  /** added to every reset, for clock skew between harness and service (default 250 ms) */
  marginMs?: number;
  /** the window W (PROFILE §11, default 60 s): a reset is at most W + 1 s away, so no wait is longer */
  windowSeconds?: number;
  /**
   * the service's clock minus this clock, ms (default 0): X-RateLimit-Reset is a time on the
   * service's clock (src/client/service-clock.ts), waited for on this one
   */
  serviceOffsetMs?: number;
  onWait?: (wait: PaceWait) => void;
  /** by account label: accounts another process of the run uses too, and this side's part (src/client/rate-share.ts) */
  shares?: Readonly<Record<string, AccountShare>>;
  /** a 429 the pacing did not expect, and not proven a breach: the request waits its Retry-After and goes again */
  onRefusalWait?: (wait: RefusalWait) => void;
}

/** One wait for Retry-After after a 429 the pacing did not expect (src/client/refusal.ts). */
export interface RefusalWait {
  /** `<scope>/<bucket>`, or the 429's X-RateLimit-Limit when no bucket of the request has that size */
  bucket: string;
  waitMs: number;
  /** why the 429 proves no breach */
  why: string;
}

interface BucketState {
  readonly scope: string;
  readonly name: string;
  readonly isTier: boolean;
  /** the account label the bucket belongs to (an endpoint bucket's scope is its key) */
  readonly account: string;
  size: number | undefined;
  /** requests left now, by the last header less what was sent since */
  remaining: number | undefined;
  /** clock ms the described window ends */
  resetAt: number | undefined;
  inFlight: number;
  /** answers for this bucket carry no rate headers: stop waiting to learn from them */
  headerless: boolean;
  /** how much X-RateLimit-Remaining has been seen to overstate what is left (a 429 said it) */
  overstated: number;
  /**
   * a 429 came while its Remaining said there was room: from then on Remaining is no more than
   * a ceiling, and what was sent since the refill is counted here, so a header that never goes
   * down (or lies otherwise) costs one 429 per window, not a crawl
   */
  distrusted: boolean;
  /** the account is shared with another process of the run: this side's sliding cap on the bucket */
  cap?: SlidingCap;
  /** requests the budget let into the bucket so far, each counted once */
  acquired: number;
  /** when the last of them was let in (clock ms): its window ends within W + 1 s of it (PROFILE §7) */
  lastAcquiredAt?: number;
  /** the last counted answer whose headers described this bucket alone, and its request's marks (PaceTicket.marks, .uncountedMarks) */
  told?: { limit: number; remaining: number; reset: number; mark: number; uncounted: number };
  /** answers so far that the service counted in no bucket (429 RATE_LIMIT_EXCEEDED, 401): requests of this run's it did not spend */
  uncounted: number;
  /** X-RateLimit-Remaining once dropped by more than the harness sent: another client spends this bucket */
  foreign: boolean;
  /** the window (X-RateLimit-Reset) in which the bucket first refused with room by the harness's count (src/client/refusal.ts) */
  refusedWithRoomIn?: RoomRefusal;
}

export interface PaceTicket {
  readonly buckets: readonly BucketState[];
  /** the budget let it through as within the buckets (not a check emptying one on purpose) */
  readonly paced?: boolean;
  /**
   * by bucket, as `buckets`: the requests of that bucket the service may count after this one are
   * those acquired after the mark (this one included), as any still in flight may overtake it
   */
  readonly marks?: readonly number[];
  /** by bucket, as `buckets`: its answers counted in no bucket when this one was acquired (`BucketState.uncounted`) */
  readonly uncountedMarks?: readonly number[];
}

export class RateBudget {
  private readonly clock: Clock;
  private readonly marginMs: number;
  private readonly maxWaitMs: number;
  private readonly serviceOffsetMs: number;
  private readonly onWait: ((wait: PaceWait) => void) | undefined;
  private readonly buckets = new Map<string, BucketState>();
  private readonly shares: Readonly<Record<string, AccountShare>>;
  /** by account label: when its share stops applying (the other side ended a window ago) */
  private readonly sharesEnd = new Map<string, number>();
  private settled: Array<() => void> = [];
  private readonly onRefusalWait: ((wait: RefusalWait) => void) | undefined;

  constructor(options: RateBudgetOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.marginMs = options.marginMs ?? 250;
    const window = options.windowSeconds ?? RATE_LIMITS.defaultWindowSeconds;
    this.maxWaitMs = (window + RATE_LIMITS.resetSlackSeconds) * 1000 + this.marginMs;
    this.onWait = options.onWait;
    this.serviceOffsetMs = options.serviceOffsetMs ?? 0;
    this.shares = options.shares ?? {};
    this.onRefusalWait = options.onRefusalWait;
  }

  /** How long a 429 that announced no Retry-After waits: PROFILE §7, a bucket refills within W + 1 s. */
  get unannouncedWaitMs(): number {
    return this.maxWaitMs;
  }

  /**
   * The other side of a shared account ended at `endedAt` (clock ms): a window later none of its
   * requests can count in any window the service still has open, and this side's answers since
   * tell it the whole truth, so its cap stops applying then.
   */
  endShare(account: string, endedAt: number): void {
    const endsAt = endedAt + this.maxWaitMs;
    this.sharesEnd.set(account, endsAt);
    for (const b of this.buckets.values()) if (b.account === account && b.cap) b.cap.endsAt = endsAt;
  }

  /**
   * Take one request from each bucket the request counts in, first waiting while one is empty.
   * With `wait: false` (a check exhausting a bucket on purpose) it only counts.
   */
  async acquire(request: PaceRequest, { wait = true }: { wait?: boolean } = {}): Promise<PaceTicket> {
    const states = this.statesOf(request);
    while (wait) {
      const now = this.clock.now();
      for (const b of states) this.refill(b, now);
      const empty = states.find((b) => b.remaining !== undefined && b.remaining <= 0);
      if (empty?.resetAt !== undefined) {
        await this.sleep(empty, Math.min(empty.resetAt + this.marginMs - now, this.maxWaitMs), "empty until reset");
        continue;
      }
      // An empty bucket with no known reset, or an endpoint bucket not learnt yet: one answer in flight will tell.
      const unknown = empty ?? states.find((b) => !b.isTier && b.remaining === undefined && !b.headerless && b.inFlight > 0);
      if (unknown !== undefined && unknown.inFlight > 0) {
        this.onWait?.({ bucket: label(unknown), waitMs: 0, reason: "awaiting an answer to learn the bucket" });
        await this.nextSettle();
        continue;
      }
      // a shared account: this side's part of the bucket is taken until a place frees
      const capped = states.find((b) => this.capOf(b) !== undefined && b.cap!.waitMs(now) !== 0);
      if (capped !== undefined) {
        const waitMs = capped.cap!.waitMs(now);
        if (waitMs === undefined) {
          this.onWait?.({ bucket: label(capped), waitMs: 0, reason: "within this side's share" });
          await this.nextSettle();
        } else await this.sleep(capped, waitMs, "within this side's share");
        continue;
      }
      break;
    }
    const marks = states.map((b) => b.acquired - b.inFlight);
    const uncountedMarks = states.map((b) => b.uncounted);
    for (const b of states) {
      this.capOf(b)?.take();
      b.inFlight++;
      b.acquired++;
      b.lastAcquiredAt = this.clock.now();
      if (b.remaining !== undefined) b.remaining--;
    }
    return { buckets: states, paced: wait, marks, uncountedMarks };
  }

  /** Learn from the answer to a request `acquire` let through; `undefined` when it got none (transport error). */
  settle(ticket: PaceTicket, answer: PaceAnswer | undefined): void {
    for (const b of ticket.buckets) b.inFlight = Math.max(0, b.inFlight - 1);
    // a shared bucket's place is held a window past the answer, when the request may have counted last
    const counted = answer === undefined || isCountedInBuckets(answer.status, answer.code);
    const freeAt = (answer?.receivedAt ?? this.clock.now()) + this.maxWaitMs;
    for (const b of ticket.buckets) b.cap?.release(counted ? freeAt : undefined);
    try {
      if (answer === undefined) return; // counted or not, unknown: keep the local count
      if (!counted) for (const b of ticket.buckets) b.uncounted++;
      // PROFILE §6, §7: an unauthenticated request and a RATE_LIMIT_EXCEEDED answer count nowhere.
      if (!counted)
        for (const b of ticket.buckets)
          if (b.remaining !== undefined) b.remaining = Math.min(b.remaining + 1, b.size ?? Infinity);
      const rate = answer.rate;
      if (rate?.limit !== undefined && rate.remaining !== undefined && rate.reset !== undefined) {
        if (counted) this.remember(ticket, { limit: rate.limit, remaining: rate.remaining, reset: rate.reset });
        for (const b of ticket.buckets) b.headerless = false;
        this.learn(ticket, answer, { limit: rate.limit, remaining: rate.remaining, reset: rate.reset });
      } else if (counted) {
        for (const b of ticket.buckets) b.headerless = true;
      }
      // only a 429 the budget did not expect: one a check asked for by emptying a bucket is no news
      if (ticket.paced && answer.status === 429 && answer.code === "RATE_LIMIT_EXCEEDED" && answer.rate?.retryAfter !== 1)
        this.distrust(ticket, answer);
    } finally {
      const waiting = this.settled;
      this.settled = [];
      for (const resolve of waiting) resolve();
    }
  }

  /**
   * The bucket of the request whose size is `limit`, when the headers can describe no other: the
   * endpoint's bucket, its size not the tier's (the tier's known). The tier is never told apart
   * this way: other keys and lanes of the account spend it too.
   */
  private describedBucket(
    ticket: PaceTicket,
    limit: number | undefined,
  ): { bucket: BucketState; mark: number; uncounted: number } | undefined {
    const i = ticket.buckets.findIndex((b) => !b.isTier);
    const endpoint = ticket.buckets[i];
    const tier = ticket.buckets.find((b) => b.isTier);
    if (endpoint === undefined || endpoint.size !== limit || tier?.size === undefined || tier.size === limit) return undefined;
    return { bucket: endpoint, mark: ticket.marks?.[i] ?? 0, uncounted: ticket.uncountedMarks?.[i] ?? 0 };
  }

  /**
   * A counted answer that described the endpoint's bucket: the last word on it, and a use of the
   * bucket this harness's own requests cannot explain is another client's. Within one window the
   * drop since the last answer is compared with what was sent since; the first answer of a new
   * window is compared with a full bucket, as a neighbour that spends the bucket at each window's
   * start (a client pacing on Retry-After does) shows only there.
   */
  private remember(ticket: PaceTicket, rate: { limit: number; remaining: number; reset: number }): void {
    const described = this.describedBucket(ticket, rate.limit);
    if (described === undefined) return;
    const { bucket: b, mark, uncounted } = described;
    const last = b.told;
    // an answer overtaken by one of a later window says nothing newer
    if (last !== undefined && rate.reset < last.reset) return;
    // what the bucket held when this window's count began, as the service told it
    const before = last?.reset === rate.reset ? last.remaining : rate.limit;
    // this harness's requests the service may have counted since then: with an earlier answer, every
    // request acquired after its mark but that answer's own (counted before it, in its window);
    // with none, every request so far. Less those answered since that the service counted nowhere
    // (a 429, a 401): a neighbour that spends only that much would hide behind them
    const own = last === undefined ? b.acquired - b.uncounted : b.acquired - last.mark - 1 - (b.uncounted - last.uncounted);
    if (before - rate.remaining > own) b.foreign = true;
    b.told = { ...rate, mark, uncounted };
  }

  /** What the budget knows of a 429 RATE_LIMIT_EXCEEDED it let through: the bucket its headers describe and that bucket's last word. */
  refusal(ticket: PaceTicket, answer: PaceAnswer): Refusal {
    const rate = answer.rate;
    const described = this.describedBucket(ticket, rate?.limit);
    const base = { remaining: rate?.remaining, reset: rate?.reset, retryAfterSeconds: rate?.retryAfter };
    if (described === undefined) return base;
    const b = described.bucket;
    const notOwn = b.foreign
      ? "its X-RateLimit-Remaining once dropped by more than the harness had sent: another client spends this bucket"
      : this.shares[b.account] !== undefined
        ? "another lane of this run uses the same account"
        : undefined;
    const told = b.told && { ...b.told, sentSince: Math.max(0, b.acquired - b.told.mark - 2) };
    const kind = b.name.startsWith("agentMessages:") ? "limits.agent-bucket" : "limits.endpoint-bucket";
    const refusedWithRoomIn = b.refusedWithRoomIn;
    return { ...base, bucket: { label: `${b.name} bucket of ${b.scope}`, clause: kind, told, notOwn, refusedWithRoomIn } };
  }

  /**
   * A refusal that proved nothing: the request waits for Retry-After; the run counts the wait per
   * bucket. `refusedWithRoomIn`: the bucket refused with room by the harness's count in that window,
   * remembered so that the same in another window is a finding.
   */
  refusalWait(ticket: PaceTicket, answer: PaceAnswer, why: string, waitMs: number, refusedWithRoomIn?: RoomRefusal): void {
    const described = this.describedBucket(ticket, answer.rate?.limit);
    if (described && refusedWithRoomIn !== undefined) described.bucket.refusedWithRoomIn = refusedWithRoomIn;
    const bucket = described ? label(described.bucket) : `a bucket of ${answer.rate?.limit ?? "unknown"} (not told apart)`;
    this.onRefusalWait?.({ bucket, waitMs, why });
  }

  /**
   * A 429 the pacing did not expect means the headers misled it (or were missing): the bucket is
   * empty whatever they said, until the announced refill or, with none, the window W that PROFILE §7
   * guarantees — so a target with wrong headers costs a wait, not a cascade of 429s.
   */
  private distrust(ticket: PaceTicket, answer: PaceAnswer): void {
    const endpoint = ticket.buckets.find((b) => !b.isTier) ?? ticket.buckets[0];
    if (endpoint === undefined) return;
    // the pacing let it through as within the buckets: the headers had promised room
    endpoint.distrusted = true;
    if (endpoint.remaining !== undefined && endpoint.remaining <= 0 && endpoint.resetAt !== undefined) return;
    const announced = answer.rate?.retryAfter !== undefined ? answer.receivedAt + answer.rate.retryAfter * 1000 : undefined;
    // Remaining on a 429 from an empty bucket is 0: anything more is what the header overstates, from now on
    endpoint.overstated = Math.max(endpoint.overstated, answer.rate?.remaining ?? 0);
    endpoint.remaining = 0;
    endpoint.resetAt = Math.min(announced ?? Infinity, answer.receivedAt + this.maxWaitMs - this.marginMs);
  }

  /**
   * A check that exhausted a bucket on purpose waits here for the refill its 429 announced:
   * the later of `Retry-After` and `X-RateLimit-Reset`, plus the margin. A 429 that announced
   * neither waits the whole window W (PROFILE §7: a bucket refills within W + 1 s).
   */
  async afterExhaustion(exchange: { receivedAt: number; rate?: RateHeaders | undefined }): Promise<{
    announced: boolean;
    waitedMs: number;
  }> {
    const rate = exchange.rate;
    const candidates: number[] = [];
    if (rate?.retryAfter !== undefined) candidates.push(exchange.receivedAt + rate.retryAfter * 1000);
    if (rate?.reset !== undefined) candidates.push(rate.reset * 1000 - this.serviceOffsetMs);
    if (candidates.length === 0) {
      this.onWait?.({ bucket: "unannounced 429", waitMs: this.maxWaitMs, reason: "after exhaustion" });
      await this.clock.sleep(this.maxWaitMs);
      return { announced: false, waitedMs: this.maxWaitMs };
    }
    const waitMs = Math.min(Math.max(...candidates) + this.marginMs - this.clock.now(), this.maxWaitMs);
    if (waitMs > 0) {
      this.onWait?.({ bucket: "announced by 429", waitMs, reason: "after exhaustion" });
      await this.clock.sleep(waitMs);
    }
    return { announced: true, waitedMs: Math.max(0, waitMs) };
  }

  /**
   * Wait until every bucket of `account` that this budget let a request into (its tier, its keys'
   * endpoint buckets) is full again: a check that needs them all full at once (two buckets emptied
   * together) starts there, whatever the checks before it left in them. A bucket whose reset an
   * answer told is full at that reset; one whose answers described another bucket (the tier, when it
   * had fewer left) told none, and is surely full W + 1 s after its last request (PROFILE §7). Only
   * the requests this budget paced or counted are known: another process's are not.
   */
  async untilAccountFull(account: string): Promise<number> {
    const now = this.clock.now();
    let until = now;
    for (const b of this.buckets.values()) {
      if (b.account !== account || b.lastAcquiredAt === undefined) continue;
      this.refill(b, now);
      if (b.resetAt !== undefined) until = Math.max(until, b.resetAt + this.marginMs);
      else if (b.size === undefined || b.remaining === undefined || b.remaining + b.inFlight < b.size)
        until = Math.max(until, b.lastAcquiredAt + this.maxWaitMs);
    }
    const waitMs = Math.min(until - now, this.maxWaitMs);
    if (waitMs <= 0) return 0;
    this.onWait?.({ bucket: `${account}/every bucket`, waitMs, reason: "after exhaustion" });
    await this.clock.sleep(waitMs);
    return waitMs;
  }

  snapshot(): BucketSnapshot[] {
    return [...this.buckets.values()].map(({ scope, name, size, remaining, resetAt, inFlight }) => ({
      scope,
      name,
      size,
      remaining,
      resetAt,
      inFlight,
    }));
  }

  /* ------------------------------------------------------------------ internals */

  private statesOf(request: PaceRequest): BucketState[] {
    const accountScope = request.account ?? request.key;
    const tier = this.state(accountScope, accountScope, TIER_BUCKET, true, request.tierLimit);
    if (request.tierLimit !== undefined) tier.size = request.tierLimit;
    if (request.bucket === undefined) return [tier];
    // PROFILE §7: Send Message counts per agent across the account's keys; the others per key.
    const scope = request.bucket.name.startsWith("agentMessages:") ? accountScope : request.key;
    return [this.state(scope, accountScope, request.bucket.name, false, request.bucket.size), tier];
  }

  /** The bucket's sliding cap when its account is shared (made once its size is known, if this side needs it). */
  private capOf(b: BucketState): SlidingCap | undefined {
    if (b.cap !== undefined) return b.cap;
    const share = this.shares[b.account];
    // each lane sends messages only to its own agents: a per-agent bucket has one user
    if (share === undefined || b.name.startsWith("agentMessages:")) return undefined;
    const cap = shareCap(share, b);
    if (cap !== undefined) b.cap = new SlidingCap(cap, this.sharesEnd.get(b.account));
    return b.cap;
  }

  private state(scope: string, account: string, name: string, isTier: boolean, size: number | undefined): BucketState {
    const id = `${scope}\u0000${name}`;
    let b = this.buckets.get(id);
    if (b === undefined) {
      b = {
        scope,
        name,
        isTier,
        account,
        size,
        remaining: undefined,
        resetAt: undefined,
        inFlight: 0,
        headerless: false,
        overstated: 0,
        distrusted: false,
        acquired: 0,
        foreign: false,
        uncounted: 0,
      };
      this.buckets.set(id, b);
    }
    return b;
  }

  /** Past its reset (and the margin), a bucket is full again; its next window is unknown until an answer says. */
  private refill(b: BucketState, now: number): void {
    if (b.resetAt === undefined || now < b.resetAt + this.marginMs) return;
    b.resetAt = undefined;
    b.remaining = b.size === undefined ? undefined : b.size - b.inFlight;
  }

  /**
   * The headers describe the tightest of the request's buckets (PROFILE §7), so they are exact for
   * the bucket whose size is `X-RateLimit-Limit` and a lower bound for the other. Which one that is
   * follows from the sizes: the endpoint's from the contract, the tier's once learnt. While they
   * cannot be told apart (the tier's size unknown or the same), the endpoint's bucket takes them,
   * as PROFILE breaks ties toward it; with equal sizes the tier takes them too, to stay on the safe side.
   */
  private learn(ticket: PaceTicket, answer: PaceAnswer, rate: { limit: number; remaining: number; reset: number }): void {
    const endpoint = ticket.buckets.find((b) => !b.isTier);
    const tier = ticket.buckets.find((b) => b.isTier);
    let resetAt = rate.reset * 1000 - this.serviceOffsetMs;
    if (answer.status === 429 && answer.rate?.retryAfter !== undefined)
      resetAt = Math.max(resetAt, answer.receivedAt + answer.rate.retryAfter * 1000);
    // PROFILE §7: a reset is at most W + 1 s away; one further off is not believed.
    resetAt = Math.min(resetAt, answer.receivedAt + this.maxWaitMs - this.marginMs);
    const exact = (b: BucketState) => {
      b.size = rate.limit;
      const told = rate.remaining - b.overstated - b.inFlight;
      b.remaining = b.distrusted && b.remaining !== undefined ? Math.min(b.remaining, told) : told;
      b.resetAt = resetAt;
    };
    const lowerBound = (b: BucketState, create: boolean) => {
      const floor = rate.remaining - b.inFlight;
      if (b.remaining === undefined ? create : b.remaining < floor) b.remaining = floor;
    };
    if (endpoint !== undefined && endpoint.size === rate.limit) {
      exact(endpoint);
      if (tier === undefined) return;
      if (tier.size === rate.limit) exact(tier);
      else lowerBound(tier, false);
    } else if (tier !== undefined) {
      exact(tier);
      if (endpoint !== undefined) lowerBound(endpoint, true);
    }
  }

  private async sleep(b: BucketState, waitMs: number, reason: PaceWait["reason"]): Promise<void> {
    const ms = Math.max(0, waitMs);
    this.onWait?.({ bucket: label(b), waitMs: ms, reason });
    await this.clock.sleep(ms);
  }

  private nextSettle(): Promise<void> {
    return new Promise((resolve) => this.settled.push(resolve));
  }
}

function label(b: BucketState): string {
  return `${b.scope}/${b.name}`;
}
