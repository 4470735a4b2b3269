import { CLAUSE_BY_ID, type ClauseId } from "../contract/index.js";

/**
 * A 429 RATE_LIMIT_EXCEEDED the pacing did not expect (src/client/rate-budget.ts let the request
 * through as within its buckets) is never evidence for the clause of the check that sent it. It
 * is one of two things, and nothing else:
 * - a PROFILE §7 finding about the bucket that refused, only when the service's own answers prove
 *   it: the last answer from that bucket in the same window (the same X-RateLimit-Reset, a time
 *   on the service's clock) said Remaining was above what the harness has sent since, so the
 *   bucket had room by the service's own count — and that in two windows, with the same room left, and no drop of
 *   Remaining this run's own requests cannot explain seen on the bucket. Once is no proof: another
 *   client on the same key may spend the bucket between two of this run's answers, unseen by it;
 *   a service that miscounts does it window after window, while another client's spending shows
 *   in this run's answers (a drop between two of them larger than what this run sent, or a first
 *   answer of a window with more gone than this run can have had counted in it: a neighbour that
 *   spends the bucket the same way each window, at its start, shows there), and then the refusal
 *   proves nothing;
 * - otherwise a wait for exactly the Retry-After the 429 announced, and the request again
 *   (counted per bucket and shown in the run's output).
 */

/** What the service last said of one bucket, and what the harness has sent into it since. */
export interface BucketTold {
  /** X-RateLimit-Limit of that answer: the bucket's size */
  limit: number;
  /** X-RateLimit-Remaining of that answer */
  remaining: number;
  /** X-RateLimit-Reset of that answer: the window's end on the service's clock */
  reset: number;
  /** requests that may have been counted in the bucket after that one, the refused one excluded */
  sentSince: number;
}

/** The bucket the refusal's headers describe, as far as the harness can tell it apart. */
export interface RefusingBucket {
  /** for people: "Create bucket of key:3f2a…" */
  label: string;
  /** the clause that gives the bucket its size */
  clause: ClauseId;
  told?: BucketTold | undefined;
  /** why the harness cannot count every request of the bucket (another user seen, a shared account) */
  notOwn?: string | undefined;
  /** the last earlier window in which this bucket refused with room by the harness's count (no foreign drop seen since) */
  refusedWithRoomIn?: RoomRefusal | undefined;
}

/** A refusal with room by the harness's count: its window (X-RateLimit-Reset) and the room left (Remaining told less sent since). */
export interface RoomRefusal {
  reset: number;
  room: number;
}

export interface Refusal {
  /** the 429's X-RateLimit-Remaining and Reset (PROFILE §7: 0, and when the empty bucket refills) */
  remaining?: number | undefined;
  reset?: number | undefined;
  retryAfterSeconds?: number | undefined;
  /** the one bucket of the request whose size is the 429's X-RateLimit-Limit; undefined when none or ambiguous */
  bucket?: RefusingBucket | undefined;
}

export type RefusalDecision =
  | { kind: "breach"; clause: ClauseId; message: string }
  | {
      kind: "wait";
      bucket: string;
      waitMs: number | undefined;
      why: string;
      /** the window in which the bucket refused with room by the harness's count, and the room: once is no proof */
      refusedWithRoomIn?: RoomRefusal;
    };

/** The words of a breach proven only by the harness's own count of the bucket: a reader (and a test) can tell one apart. */
export const OWN_COUNT_PROOF = "the bucket had room by the service's own count";

/** The decision on one refusal the pacing did not expect. `waitMs` undefined: the 429 announced no Retry-After. */
export function judgeRefusal(refusal: Refusal): RefusalDecision {
  const waitMs = refusal.retryAfterSeconds === undefined ? undefined : refusal.retryAfterSeconds * 1000;
  const bucket = refusal.bucket;
  const wait = (why: string) => ({ kind: "wait" as const, bucket: bucket?.label ?? "a bucket not told apart", waitMs, why });
  if (bucket === undefined) return wait("its headers describe no bucket the harness can tell apart from the others");
  // PROFILE §7: a 429 from an empty bucket says Remaining 0; one with room left is the in-flight cap's, or no bucket's
  if (refusal.remaining !== 0) return wait("its X-RateLimit-Remaining is not 0: not a refusal by an empty bucket");
  if (bucket.notOwn !== undefined) return wait(bucket.notOwn);
  const told = bucket.told;
  if (told === undefined) return wait("no earlier answer from this bucket to compare with");
  if (told.reset !== refusal.reset) return wait("its last answer described another window (another X-RateLimit-Reset)");
  if (told.remaining <= told.sentSince)
    return wait(`its last answer said Remaining ${told.remaining}, and the harness has sent ${told.sentSince} since`);
  const before = bucket.refusedWithRoomIn;
  const room = told.remaining - told.sentSince;
  // a service that miscounts refuses at the same count window after window; another client's spending varies
  if (before === undefined || before.reset === told.reset || before.room !== room)
    return {
      ...wait(
        `its last answer in the same window said Remaining ${told.remaining}, and the harness has sent ${told.sentSince} since; ` +
          "once is no proof (another client on the same key may have spent the bucket unseen): a finding if another window shows the same room refused",
      ),
      refusedWithRoomIn: { reset: told.reset, room },
    };
  const clause = CLAUSE_BY_ID.get(bucket.clause);
  return {
    kind: "breach",
    clause: bucket.clause,
    message:
      `the ${bucket.label} refused a request (429 RATE_LIMIT_EXCEEDED, Remaining 0) while its last answer in the same ` +
      `window (X-RateLimit-Reset ${told.reset}) said Remaining ${told.remaining} of ${told.limit}, and the harness has ` +
      `sent ${told.sentSince} request(s) into it since; it refused with the same room (${room}) in the window ending ${before.reset}, and no answer ` +
      `showed another client spending it: ${OWN_COUNT_PROOF}${clause ? ` (${clause.text})` : ""}`,
  };
}

/** A refusal the service's own answers prove wrong: a finding of the bucket's clause (classified as a failure). */
export class RateLimitBreach extends Error {
  override name = "RateLimitBreach";
  constructor(
    message: string,
    readonly clause: ClauseId,
  ) {
    super(`PROFILE ${CLAUSE_BY_ID.get(clause)?.section ?? "§7"} ${clause}: ${message}`);
  }
}

/**
 * The same request refused again and again though the pacing expected room, each time after
 * waiting the Retry-After: the harness cannot judge the check (something else spends the
 * buckets), so it is no finding of the check's clause.
 */
export class RefusedAgain extends Error {
  override name = "RefusedAgain";
}
