import type { FastifyInstance, FastifyRequest } from "fastify";
import type { BucketState, RateBucket } from "../ratelimit.js";
import { type FaultRecord, fault, wrap } from "./tools.js";

/**
 * Defects only load reveals: each stays invisible to one request at a time and
 * shows when many run at once. The functional suite passes against each; the load suite fails.
 */

/** Past this many messages in flight on the server, the "under load" defects switch on. */
export const UNDER_LOAD_IN_FLIGHT = 15;
const STALL_MS = 3_000;
const LATE_BUDGET_MS = 5_000;

/** The callback `ServerResponse.write` takes, in either of its overloads. */
type WriteCallback = (error: Error | null | undefined) => void;

const isSendMessage = (req: FastifyRequest) => req.routeOptions.config?.endpoint === "sendMessage";

/** Messages in flight on this server (admitted or not, until their connection closes). */
function countInFlight(app: FastifyInstance): { readonly value: number } {
  const counter = { value: 0 };
  app.addHook("onRequest", async (req, reply) => {
    if (!isSendMessage(req)) return;
    counter.value++;
    reply.raw.once("close", () => counter.value--);
  });
  return counter;
}

export const LOAD_FAULTS: FaultRecord = {
  "bucket-check-then-count": fault(
    "limits.endpoint-bucket",
    "buckets are read, then counted after an await: a burst overfills",
    (_app, ctx) => {
      const limiter = ctx.limiter;
      const admit = limiter.admit.bind(limiter);
      const tightest = limiter.tightest.bind(limiter);
      const pending = new Map<string, number>();
      const seen = (b: RateBucket, now?: number): BucketState => {
        const s = tightest([b], now);
        return { ...s, remaining: Math.max(0, s.remaining - (pending.get(b.key) ?? 0)) };
      };
      // the headers count what is pending, so one request at a time sees nothing wrong
      limiter.tightest = (buckets, now) =>
        buckets.map((b) => seen(b, now)).reduce((best, s) => (s.remaining < best.remaining ? s : best));
      limiter.admit = (buckets) => {
        // the read: every request of this turn of the event loop sees the buckets as they were
        if (buckets.some((b) => tightest([b]).remaining === 0)) return admit(buckets);
        for (const b of buckets) pending.set(b.key, (pending.get(b.key) ?? 0) + 1);
        setImmediate(() => {
          for (const b of buckets) pending.set(b.key, (pending.get(b.key) ?? 1) - 1);
          admit(buckets); // the count, after the await
        });
        return { admitted: true };
      };
    },
  ),
  "concurrency-check-then-acquire": fault(
    "limits.concurrency",
    "a message slot is checked, then taken after an await: a burst overfills",
    (_app, ctx) => {
      wrap(ctx.gate, "tryAcquire", (tryAcquire) => (key) => {
        let release: (() => void) | undefined;
        let released = false;
        setImmediate(() => {
          if (!released) release = tryAcquire(key) ?? (() => {});
        });
        return () => {
          released = true;
          release?.();
        };
      });
    },
  ),
  "deltas-stall-under-load": fault(
    "reference.mock-models",
    `with ${UNDER_LOAD_IN_FLIGHT}+ messages in flight a stream's deltas stall ${STALL_MS / 1000} s`,
    (app, ctx) => {
      const inFlight = countInFlight(app);
      app.addHook("preHandler", async (req, reply) => {
        if (!isSendMessage(req)) return;
        const raw = reply.raw;
        const write = raw.write.bind(raw);
        const end = raw.end.bind(raw);
        let held: string[] | undefined;
        let ended = false;
        let deltas = 0;
        raw.write = (chunk: unknown, encodingOrCallback?: BufferEncoding | WriteCallback, callback?: WriteCallback) => {
          if (typeof chunk !== "string" || (!held && !chunk.startsWith("event: delta")))
            return typeof encodingOrCallback === "string"
              ? write(chunk, encodingOrCallback, callback)
              : write(chunk, encodingOrCallback);
          if (held) return held.push(chunk) > 0;
          // a few deltas flow, then the stream stalls while the server is busy
          if (chunk.startsWith("event: delta") && ++deltas > 3 && inFlight.value >= UNDER_LOAD_IN_FLIGHT) {
            held = [chunk];
            ctx.clock.setTimer(STALL_MS, () => {
              const frames = held ?? [];
              held = undefined;
              for (const f of frames) if (!raw.destroyed) write(f);
              if (ended && !raw.writableEnded) end();
            });
            return true;
          }
          return write(chunk);
        };
        raw.end = (chunkOrCallback?: unknown, encodingOrCallback?: BufferEncoding | (() => void), callback?: () => void) => {
          // a held stream ends once its frames are out; any other answer ends as asked
          if (held) ended = true;
          else if (typeof encodingOrCallback === "string") end(chunkOrCallback, encodingOrCallback, callback);
          else end(chunkOrCallback, encodingOrCallback);
          return raw;
        };
      });
    },
  ),
  "quota-refusals-counted-once-a-turn": fault(
    "limits.quota",
    "an account's quota refusals of one event-loop turn are counted in its buckets once",
    (_app, ctx) => {
      // the accounts whose quota a refusal has shown spent
      const spentAccounts = new Set<string>();
      const spend = ctx.spendQuota.bind(ctx);
      ctx.spendQuota = (principal) => {
        const spent = spend(principal);
        if (!spent) spentAccounts.add(principal.account.id);
        return spent;
      };
      const refusedThisTurn = new Set<string>();
      let uncounted = 0;
      const chosen = ctx.seam.rateBuckets;
      ctx.seam.rateBuckets = (buckets, principal, req) => {
        const own = chosen(buckets, principal, req);
        const account = principal.account.id;
        if (!isSendMessage(req) || !spentAccounts.has(account)) return own;
        if (!refusedThisTurn.has(account)) {
          refusedThisTurn.add(account);
          setImmediate(() => refusedThisTurn.delete(account));
          return own;
        }
        // counted in buckets of its own that nobody reads again: as good as not counted
        uncounted++;
        return own.map((b) => ({ ...b, key: `${b.key}#uncounted-${uncounted}` }));
      };
    },
  ),
  "budget-late-under-load": fault(
    "message.budget",
    `with ${UNDER_LOAD_IN_FLIGHT}+ messages in flight the budget fires ${LATE_BUDGET_MS / 1000} s late`,
    (app, ctx) => {
      const inFlight = countInFlight(app);
      // the budget of a message that starts while the server is busy is measured late
      const before = ctx.seam.messageBudgetMs;
      ctx.seam.messageBudgetMs = (ms, req) => before(ms, req) + (inFlight.value >= UNDER_LOAD_IN_FLIGHT ? LATE_BUDGET_MS : 0);
    },
  ),
};
