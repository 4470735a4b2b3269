/**
 * Two processes of one run may use the same account and key (account lanes, src/plan/lanes.ts):
 * each counts only its own requests, so neither can learn from the other's. They split every
 * bucket they both count in instead: the account's tier and the endpoint buckets of its keys
 * (PROFILE §7). The guest keeps to a fixed part of each, the host to the rest, each with a
 * sliding cap: a request holds its place from the moment it is sent until W + 1 s (and the
 * margin) after its answer came. PROFILE §7 puts the end of a window at most W + 1 s after any
 * request counted in it, so two requests of one window always hold their places at the same time:
 * whatever the service's windows are, the two never send more than the bucket's size in one.
 * (Per-agent message buckets are not split: each lane sends messages only to its own agents.)
 */
export interface AccountShare {
  /** the guest's part: of the account's tier, and of each endpoint bucket of the account's keys */
  guest: { tier: number; endpoint: number };
  /** which of the two this budget is; the host takes each bucket's size less the guest's part */
  side: "host" | "guest";
}

/** This side's cap on a bucket of `size` (the tier's size may be unknown to the guest: its part needs none). */
export function shareCap(share: AccountShare, bucket: { isTier: boolean; size: number | undefined }): number | undefined {
  const part = bucket.isTier ? share.guest.tier : share.guest.endpoint;
  if (share.side === "guest") return bucket.size === undefined ? part : Math.min(part, bucket.size);
  return bucket.size === undefined ? undefined : Math.max(0, bucket.size - part);
}

/** At most `cap` requests hold a place at once; a place is held from sending until its release time. */
export class SlidingCap {
  /** when each held place frees (clock ms); Infinity while its answer has not come */
  private readonly held: number[] = [];

  constructor(
    readonly cap: number,
    /** the cap stops applying at this clock time (the other side has ended) */
    public endsAt = Number.POSITIVE_INFINITY,
  ) {}

  /** 0: a place is free now; a positive wait: the next place frees then; undefined: only an answer will free one. */
  waitMs(now: number): number | undefined {
    if (now >= this.endsAt) return 0;
    this.purge(now);
    if (this.held.length < this.cap) return 0;
    const next = Math.min(...this.held);
    return Number.isFinite(next) ? Math.min(next, this.endsAt) - now : undefined;
  }

  take(): void {
    this.held.push(Number.POSITIVE_INFINITY);
  }

  /** The answer came (or none will): the place frees at `freeAt`, or at once for a request counted nowhere. */
  release(freeAt: number | undefined): void {
    const i = this.held.indexOf(Number.POSITIVE_INFINITY);
    if (i < 0) return;
    if (freeAt === undefined) this.held.splice(i, 1);
    else this.held[i] = freeAt;
  }

  private purge(now: number): void {
    for (let i = this.held.length - 1; i >= 0; i--) if (this.held[i]! <= now) this.held.splice(i, 1);
  }
}
