import { type ClauseId, ENDPOINTS, type EndpointId, isCountedInBuckets, RATE_LIMITS } from "../../contract/index.js";
import type { LoadResponse } from "../recorder.js";
import { labelOf } from "../requests.js";
import type { TenantAccount, TenantKey } from "./plan.js";

/** One PROFILE §7 bucket a request is counted in (or, for `concurrency`, holds a slot of). */
export interface BucketRef {
  id: string;
  kind: "keyEndpoint" | "agentMessages" | "tier" | "concurrency";
  size: number;
  /** how a finding names it: `GET /agents/{agentId} of key #3`, `tier of acct_7` */
  label: string;
  clause: ClauseId;
}

/** The buckets a request of `key` to `endpoint` (on `agentId`) is counted in, the endpoint's own first (PROFILE §7). */
export function bucketsOf(key: TenantKey, account: TenantAccount, endpoint: EndpointId, agentId?: string): BucketRef[] {
  const spec = ENDPOINTS[endpoint];
  const label = labelOf({ endpoint });
  const tier: BucketRef = {
    id: `t:${account.id}`,
    kind: "tier",
    size: account.tierLimit,
    label: `the tier of ${account.id} (${account.tierLimit})`,
    clause: "limits.tier",
  };
  if (spec.bucket.kind === "agentMessages")
    return [
      {
        id: `a:${account.id}:${agentId}`,
        kind: "agentMessages",
        size: spec.bucket.size,
        label: `${label} to agent ${agentId} (${spec.bucket.size})`,
        clause: "limits.agent-bucket",
      },
      tier,
      {
        id: `c:${account.id}:${agentId}`,
        kind: "concurrency",
        size: RATE_LIMITS.messageConcurrency,
        label: `messages in flight to agent ${agentId} (${RATE_LIMITS.messageConcurrency})`,
        clause: "limits.concurrency",
      },
    ];
  return [
    {
      id: `k:${key.index}:${endpoint}`,
      kind: "keyEndpoint",
      size: spec.bucket.size,
      label: `${label} of key #${key.index} (${spec.bucket.size})`,
      clause: "limits.endpoint-bucket",
    },
    tier,
  ];
}

interface Entry {
  sentAt: number;
  settledAt: number;
}

interface Refusal extends Entry {
  buckets: BucketRef[];
  response: LoadResponse;
  who: string;
  account: string;
}

/** A 429 RATE_LIMIT_EXCEEDED no bucket explains: each bucket's count in the window before it. */
export interface UnexpectedRefusal {
  account: string;
  sentAt: number;
  /** the clause of the bucket the 429 said was empty (its X-RateLimit-Limit), or of the endpoint's own */
  clause: ClauseId;
  requestId: string | undefined;
  /** `key #3 (acct_1): GET /agents/{agentId} refused … ` */
  received: string;
}

/** A bucket that admitted more than its size in one window (the answers' own X-RateLimit-Reset). */
export interface OverAdmission {
  bucket: BucketRef;
  reset: number;
  admitted: number;
}

/** The admitted answers that describe one window of a bucket, with their send and settle times. */
interface DescribedWindow {
  bucket: BucketRef;
  reset: number;
  answers: Entry[];
}

/** Date.now() counts whole milliseconds: a time read as t happened in [t, t + 1). */
const GRAIN_MS = 1;

/**
 * Every request the capacity drive sent, per bucket, with the harness's send and settle times:
 * what the service may have counted. A request reached the service between the two, so
 *
 * - a 429 RATE_LIMIT_EXCEEDED is unexpected when, for every bucket of its request, fewer than
 *   the bucket's size counted requests could have shared a window with it (sent before it was
 *   answered, answered less than W before it was sent): no fixed window of W can then be full,
 *   whatever its start (PROFILE §7 Reference: a window starts at the bucket's first request);
 * - a bucket admitted too many when more than its size admitted answers describe the same
 *   window of it (their X-RateLimit-Limit is its size and no other bucket of theirs has it,
 *   their X-RateLimit-Reset the same second) and were surely counted in it. PROFILE §7: "now"
 *   may be when the answer leaves, so an answer counted in a window that ended before it left
 *   describes the next one; a request sent after an answer describing the window came back was
 *   counted once that window had begun, so in it.
 *
 * A request never answered (a transport error) counts as counted: the harness cannot know.
 */
export class BucketLedger {
  private readonly counted = new Map<string, { entries: Entry[]; maxSpanMs: number }>();
  private readonly refusals: Refusal[] = [];
  private readonly windows = new Map<string, DescribedWindow>();

  constructor(private readonly windowMs: number) {}

  record(who: string, account: string, buckets: readonly BucketRef[], times: Entry, response: LoadResponse | undefined): void {
    const counts = response === undefined || isCountedInBuckets(response.status, response.code);
    const admitted = response !== undefined && response.status >= 200 && response.status < 300;
    if (response?.status === 429 && !counts) this.refusals.push({ ...times, buckets: [...buckets], response, who, account });
    for (const b of buckets) {
      // a slot is held by an admitted message (or one never answered), from sending to its stream's end
      if (b.kind === "concurrency" ? !(admitted || response === undefined) : !counts) continue;
      let row = this.counted.get(b.id);
      if (!row) {
        row = { entries: [], maxSpanMs: 0 };
        this.counted.set(b.id, row);
      }
      row.entries.push(times);
      row.maxSpanMs = Math.max(row.maxSpanMs, times.settledAt - times.sentAt);
    }
    const rate = response?.rate;
    if (!admitted || rate?.limit === undefined || rate.reset === undefined || this.windowMs < 1000) return;
    const described = buckets.filter((b) => b.kind !== "concurrency" && b.size === rate.limit);
    if (described.length !== 1) return;
    const bucket = described[0]!;
    const id = `${bucket.id}|${rate.reset}`;
    const seen = this.windows.get(id);
    if (seen) seen.answers.push(times);
    else this.windows.set(id, { bucket, reset: rate.reset, answers: [times] });
  }

  /** How many counted requests of `bucket` could have shared a window (a slot) with a request sent and answered at these times. */
  private sharing(bucket: BucketRef, times: Entry): number {
    const row = this.counted.get(bucket.id);
    if (!row) return 0;
    const after = bucket.kind === "concurrency" ? times.sentAt : times.sentAt - this.windowMs;
    let n = 0;
    const from = lowerBound(row.entries, after - row.maxSpanMs);
    for (let i = from; i < row.entries.length && row.entries[i]!.sentAt < times.settledAt; i++)
      if (row.entries[i]!.settledAt > after) n++;
    return n;
  }

  /** The 429s no bucket explains. Call once every request has settled. */
  unexpectedRefusals(): UnexpectedRefusal[] {
    for (const row of this.counted.values()) row.entries.sort((a, b) => a.sentAt - b.sentAt);
    const out: UnexpectedRefusal[] = [];
    for (const r of this.refusals) {
      const held = r.buckets.map((b) => ({ b, n: this.sharing(b, r) }));
      if (held.some(({ b, n }) => n >= b.size)) continue;
      const said = r.response.rate?.limit;
      const named = r.buckets.find((b) => b.size === said && b.kind !== "concurrency");
      const own = r.buckets[0]!;
      const clause = named?.clause ?? (own.kind === "agentMessages" ? "limits.concurrency" : "limits.429");
      const reset = r.response.rate?.reset;
      out.push({
        account: r.account,
        sentAt: r.sentAt,
        clause,
        requestId: r.response.requestId,
        received: `${r.who}: ${r.response.endpoint} refused 429 (X-RateLimit-Limit ${said ?? "absent"}, window ending at X-RateLimit-Reset ${reset ?? "absent"}) while at most ${held.map(({ b, n }) => `${n} of ${b.label}`).join(", ")} could share its window`,
      });
    }
    return out;
  }

  /** The windows some bucket admitted more than its size in. */
  overAdmissions(): OverAdmission[] {
    const out: OverAdmission[] = [];
    for (const { bucket, reset, answers } of this.windows.values()) {
      // the window had begun when the first answer describing it was back (a stream's at its end: later, never wrongly early)
      const begun = Math.min(...answers.map((a) => a.settledAt));
      const admitted = answers.filter((a) => a.sentAt >= begun + GRAIN_MS).length;
      if (admitted > bucket.size) out.push({ bucket, reset, admitted });
    }
    return out;
  }
}

/** The first index whose sentAt is ≥ `at` (entries sorted by sentAt). */
function lowerBound(entries: readonly Entry[], at: number): number {
  let [lo, hi] = [0, entries.length];
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (entries[mid]!.sentAt < at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
