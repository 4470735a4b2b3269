import { type Agent, type BodyOf, type ClauseId, ENDPOINTS, type EndpointId, HEADERS } from "../contract/index.js";
import type { LoadResponse } from "./recorder.js";
import { type LoadRequest, requestTo } from "./requests.js";

/**
 * Correct under concurrency, not only fast: what only many requests at once show, judged on the
 * answers of a load run. One instance per scenario (ScenarioContext owns one); every answer,
 * autocannon's and the harness's own, goes through `answer`.
 *
 * - PROFILE §1: every request carries an X-Request-Id of its own (`nextRequestId`) and every answer
 *   must echo it (`echoes`): an answer that carries another request's id was mixed up with it.
 * - PROFILE §7: each admitted answer's X-RateLimit-Remaining must be one the requests counted
 *   before it allow (`judgeRemaining`).
 * - PROFILE §5 Update: a burst of PATCHes of different fields all take effect (`patchBurst`,
 *   `expectPatchesTookEffect`).
 */

const ID_PREFIX = `lc${Date.now().toString(36)}`;
let idSeq = 0;

/** A fresh X-Request-Id, unique in this process, of the form PROFILE §1 says is echoed (REQUEST_ID_PATTERN). */
export const nextRequestId = (): string => `${ID_PREFIX}-${(++idSeq).toString(36)}`;

/** Does the answer carry the X-Request-Id its request was sent with? (PROFILE §1) */
export const echoes = (sentRequestId: string | undefined, res: Pick<LoadResponse, "headers">): boolean =>
  sentRequestId === undefined || res.headers[HEADERS.requestId] === sentRequestId;

/** What a scenario's recorder takes: a broken clause (LoadRecorder.fail). */
export type FailSink = (clause: ClauseId, check: string, expected: string, received: string, requestId?: string) => void;

export interface ConcurrencyOptions {
  /** PROFILE §7 W; the Remaining judgement needs W ≥ 1 s (two windows of a bucket then end in different seconds) */
  windowSeconds: number;
  /** the target's clock: offset from the harness's and the difference tolerated beyond it, seconds */
  clock: { offsetSeconds: number; toleranceSeconds: number };
  /** the tier of the account behind a key, when known: an answer that may describe the tier is not judged */
  tierOf(key: string): number | undefined;
  fail: FailSink;
}

/** Who sent a request, to which endpoint (and agent): the bucket its answer is judged in. */
export interface SentRequest {
  key: string;
  endpoint: EndpointId | undefined;
  agentId?: string;
}

/** One counted answer of a bucket, as the Remaining judgement needs it (harness clock, ms). */
interface Counted {
  sentAt: number;
  receivedAt: number;
  remaining: number;
  reset: number;
  requestId: string | undefined;
}

/** One bucket's answers in a scenario: those counted in it, and when each window was first seen to hold a request. */
interface BucketAnswers {
  label: string;
  size: number;
  counted: Counted[];
  /** Reset → the earliest receipt of an answer describing that window with a request counted in it */
  firstSeen: Map<number, number>;
}

const REMAINING_CHECK = "remaining-under-concurrency";

/** What the Remaining judgement could judge of a scenario's answers: a judgement that judged none is said, never passed over. */
export interface RemainingTally {
  /** answers counted in a bucket of the endpoint table whose headers surely describe it */
  answers: number;
  /** of those, the answers surely counted in the window they describe: the ones judged */
  judged: number;
  /** windows whose answers were judged */
  windows: number;
  /** why none was judged, where there were answers */
  unjudged?: string;
}

/** What the Remaining judgement (PROFILE §7 limits.headers under concurrency) made of a scenario's answers, in one line. */
export function remainingLine(tally: RemainingTally): string {
  return tally.unjudged
    ? `X-RateLimit-Remaining under concurrency (limits.headers) not judged on its ${tally.answers} answers: ${tally.unjudged}`
    : `X-RateLimit-Remaining under concurrency (limits.headers) judged on ${tally.judged} of ${tally.answers} answers, in ${tally.windows} window(s)`;
}

/**
 * Date.now() counts whole milliseconds: a receipt read as t happened in [t, t + 1). A send time
 * (receipt − latency) is never later than the real one; a receipt is compared a grain later.
 */
const GRAIN_MS = 1;

export class ConcurrencyChecks {
  private readonly buckets = new Map<string, BucketAnswers>();

  /** tiers a scenario knows beyond the target's key roles (a keys file of tenants) */
  private readonly tiers = new Map<string, number>();

  constructor(private readonly options: ConcurrencyOptions) {}

  /** The tier of the account behind `key` (the capacity scenario's tenants): its answers can then be judged. */
  knowTier(key: string, tier: number): void {
    this.tiers.set(key, tier);
  }

  /**
   * Every answer of the scenario, to a request sent with `key` to `endpoint` (of `agentId`), or
   * to no endpoint of the table. Kept for the Remaining judgement when it surely describes the endpoint's own bucket
   * (or the agent's message bucket): its X-RateLimit-Limit is that bucket's size, and the key's
   * tier is known and of another size. An answer that may describe the tier is left out, never guessed.
   */
  answer(sent: SentRequest, res: LoadResponse): void {
    const { key, endpoint } = sent;
    const rate = res.rate;
    if (!endpoint || rate?.limit === undefined || rate.remaining === undefined || rate.reset === undefined) return;
    const { bucket } = ENDPOINTS[endpoint];
    const tier = this.tiers.get(key) ?? this.options.tierOf(key);
    if (rate.limit !== bucket.size || tier === undefined || tier === bucket.size) return;
    // PROFILE §7: the message bucket is the agent's; the others are the key's own per endpoint
    const where = bucket.kind === "agentMessages" ? (sent.agentId ?? res.url) : "";
    const id = `${key}\n${endpoint}\n${where}`;
    let b = this.buckets.get(id);
    if (!b) {
      b = { label: res.endpoint, size: bucket.size, counted: [], firstSeen: new Map() };
      this.buckets.set(id, b);
    }
    // Remaining below the size: a request was counted in that window when the answer was made
    if (rate.remaining < rate.limit) {
      const seen = b.firstSeen.get(rate.reset);
      if (seen === undefined || res.receivedAt < seen) b.firstSeen.set(rate.reset, res.receivedAt);
    }
    // PROFILE §7: every request is counted but one answered 429 RATE_LIMIT_EXCEEDED
    if (res.status === 429 && res.code === "RATE_LIMIT_EXCEEDED") return;
    b.counted.push({
      sentAt: res.receivedAt - res.latencyMs,
      receivedAt: res.receivedAt,
      remaining: rate.remaining,
      reset: rate.reset,
      requestId: res.requestId,
    });
  }

  /**
   * PROFILE §7: Remaining is what is left "now", the moment the request was counted or the moment
   * its answer left. So the k-th request counted in a window answers at most size − k: requests
   * still in flight may or may not have been counted before it, but those whose answers came
   * back before it was sent were. Over one window's answers that means: they can be given
   * distinct places k = 1, 2, … in the order of counting, each at or after the answers received
   * before it was sent, and each with Remaining ≤ size − k. No such order: an answer claims a
   * place an earlier one holds (Remaining read before the requests in flight were counted).
   *
   * Only answers surely counted in the window they describe are judged: a slow answer may leave
   * after the window it was counted in ended and describe the next one (PROFILE §7). An answer is
   * judged when that cannot be: the window it describes already held a request when it was sent
   * (another answer received earlier says so), or the bucket's previous window had ended before
   * it was sent and its answer came back within W of that end (no window can have begun and ended
   * in between).
   */
  judgeRemaining(): RemainingTally {
    const W = this.options.windowSeconds;
    const tally: RemainingTally = { answers: 0, judged: 0, windows: 0 };
    for (const b of this.buckets.values()) tally.answers += b.counted.length;
    if (W < 1) return this.unjudged(tally, W);
    const { offsetSeconds, toleranceSeconds } = this.options.clock;
    // harness ms → the target's Unix seconds, at the early (`-`) or late (`+`) end of the tolerance
    const early = (ms: number) => ms / 1000 + offsetSeconds - toleranceSeconds;
    const late = (ms: number) => ms / 1000 + offsetSeconds + toleranceSeconds;
    for (const b of this.buckets.values()) {
      const windows = [...b.firstSeen].sort(([r1], [r2]) => r1 - r2);
      const counted = (c: Counted): boolean => {
        const seen = b.firstSeen.get(c.reset);
        if (seen !== undefined && seen + GRAIN_MS < c.sentAt) return true;
        // the latest window seen before it was sent that had ended by then (its Reset rounds its end up)
        let ended: number | undefined;
        for (const [reset, at] of windows)
          if (at + GRAIN_MS < c.sentAt && reset <= early(c.sentAt) && reset < c.reset) ended = reset;
        return ended !== undefined && late(c.receivedAt + GRAIN_MS) < ended - 1 + W;
      };
      const byWindow = new Map<number, Counted[]>();
      for (const c of b.counted) {
        if (!counted(c)) continue;
        const list = byWindow.get(c.reset) ?? [];
        list.push(c);
        byWindow.set(c.reset, list);
      }
      for (const [reset, answers] of byWindow) {
        tally.windows++;
        tally.judged += answers.length;
        this.judgeWindow(b, reset, answers);
      }
    }
    return this.unjudged(tally, W);
  }

  /** A tally with answers and none judged says why (counted() above: the two ways an answer is judged). */
  private unjudged(tally: RemainingTally, W: number): RemainingTally {
    if (tally.answers === 0 || tally.judged > 0) return tally;
    if (W < 1)
      return {
        ...tally,
        unjudged: `a window of ${W} s: the judgement needs W ≥ 1 s (X-RateLimit-Reset is told in whole seconds)`,
      };
    if (W === 1)
      return {
        ...tally,
        unjudged: `none was sent after its window was seen to hold a request, the only way an answer is judged at W = ${W} s (X-RateLimit-Reset rounds a window's end up to a whole second, so no answer surely comes back within W − 1 s of it)`,
      };
    return {
      ...tally,
      unjudged:
        "none was sent after its window was seen to hold a request, nor came back within W − 1 s of the previous window's end (X-RateLimit-Reset rounds that end up to a whole second)",
    };
  }

  private judgeWindow(b: BucketAnswers, reset: number, answers: Counted[]): void {
    const byReceipt = answers.map((a) => a.receivedAt).sort((x, y) => x - y);
    // earliest place: one after every answer received before it was sent
    const places = answers.map((a) => ({ a, lo: 1 + countBelow(byReceipt, a.sentAt - GRAIN_MS), hi: b.size - a.remaining }));
    places.sort((x, y) => x.hi - y.hi || x.lo - y.lo);
    // the latest place each may take is size − Remaining: earliest-deadline-first finds an order when one exists
    const taken = new Set<number>();
    for (const p of places) {
      let k = p.lo;
      while (taken.has(k) && k <= p.hi) k++;
      if (k > p.hi) {
        const claims = answers
          .map((a) => a.remaining)
          .sort((x, y) => y - x)
          .slice(0, 12);
        this.options.fail(
          "limits.headers",
          REMAINING_CHECK,
          `${b.label}: the answers counted in the window ending ${reset} each leave X-RateLimit-Remaining ≤ ${b.size} − (its place in the order of counting), those received before a request was sent counted before it`,
          `${answers.length} answers, Remaining ${claims.join(", ")}${answers.length > claims.length ? ", …" : ""}: no order of counting allows them`,
          p.a.requestId,
        );
        return;
      }
      taken.add(k);
    }
  }
}

/** How many of the sorted `xs` are below `x`. */
function countBelow(xs: readonly number[], x: number): number {
  let [lo, hi] = [0, xs.length];
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * PROFILE §5 Update, merge-patch: fields a burst of PATCHes sets, one group of requests per field,
 * no two groups touching the same field (two share `knowledge`, each its own list in it: objects
 * merge recursively). Each field's value is a list of one tag, a plugin id and a trait alike.
 */
const PATCHED_FIELDS: ReadonlyArray<{
  field: string;
  patch(tag: string): BodyOf<"updateAgent">;
  read(agent: Agent): readonly string[];
}> = [
  { field: "personality.traits", patch: (t) => ({ personality: { traits: [t] } }), read: (a) => a.personality.traits },
  { field: "knowledge.expertise", patch: (t) => ({ knowledge: { expertise: [t] } }), read: (a) => a.knowledge.expertise },
  {
    field: "knowledge.knowledgeBases",
    patch: (t) => ({ knowledge: { knowledgeBases: [t] } }),
    read: (a) => a.knowledge.knowledgeBases,
  },
  { field: "goals.objectives", patch: (t) => ({ goals: { objectives: [t] } }), read: (a) => a.goals.objectives },
  { field: "plugins", patch: (t) => ({ plugins: [t] }), read: (a) => a.plugins },
];

/** One field a PATCH burst sets: the request shape that sets it, and how to read it back. */
export interface PatchedField {
  request: LoadRequest;
  field: string;
  tag: string;
  read(agent: Agent): readonly string[];
}

let tagSeq = 0;

/**
 * `total` PATCHes to one agent, one shape per field, each setting its field to a value no earlier
 * burst set; every connection sends the shapes in turn, so PATCHes of different fields meet.
 */
export function patchBurst(agentId: string, total: number) {
  // a plugin id (`^[a-z0-9][a-z0-9-]{0,63}$`) fits every field
  const tag = `p${Date.now().toString(36)}${(++tagSeq).toString(36)}`;
  const fields: PatchedField[] = PATCHED_FIELDS.map((f) => ({
    request: requestTo("updateAgent", { agentId, body: f.patch(tag) }),
    field: f.field,
    tag,
    read: f.read,
  }));
  const mix = fields.map((f) => f.request);
  return { group: { request: mix[0]!, count: total, mix }, fields };
}

/**
 * After a PATCH burst (`patchBurst`) to one agent, read back as `agent`: every field a PATCH answered 200
 * set holds its value (PROFILE §5: each took effect, none lost to a concurrent one), and a field
 * whose every PATCH was refused 429 does not (§7: a 429 has no effect).
 */
export function expectPatchesTookEffect(
  fields: readonly PatchedField[],
  answers: readonly LoadResponse[],
  agent: Agent,
  fail: FailSink,
): void {
  for (const g of fields) {
    const mine = answers.filter((r) => r.request === g.request);
    const admitted = mine.filter((r) => r.status === 200).length;
    const value = g.read(agent);
    const set = value.length === 1 && value[0] === g.tag;
    if (admitted > 0 && !set)
      fail(
        "update.merge-patch",
        "concurrent-patches",
        `${g.field}: a burst of PATCHes of different fields of one agent all take effect: the ${admitted} answered 200 set it to ["${g.tag}"]`,
        `reads back ${JSON.stringify(value)}`,
        mine.find((r) => r.status === 200)?.requestId,
      );
    if (mine.length > 0 && mine.every((r) => r.status === 429) && value.includes(g.tag))
      fail(
        "limits.429",
        "concurrent-patches",
        `${g.field}: every PATCH setting it was refused 429, so it was not set`,
        `reads back ${JSON.stringify(value)}`,
        mine[0]?.requestId,
      );
  }
}
