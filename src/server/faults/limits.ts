import type { FastifyRequest } from "fastify";
import { ENDPOINTS, HEADERS, MESSAGE_TIMING, RATE_LIMITS } from "../../contract/index.js";
import { agentIdParam } from "../http.js";
import { agentSlotKey } from "../ratelimit.js";
import { accountOf, endpointOf, type FaultRecord, fault, replaceError, rewriteBuckets, rewriteJson, wrap } from "./tools.js";

/** budget-keeps-slot: how far short of the budget an exchange the budget ended may look by Date.now() */
const BUDGET_END_SLACK_MS = 250;

/** sheds-past-eight-in-flight: how many messages in flight to one agent the faulty server holds to the end */
const HELD_TO_THE_END = 8;
/** sheds-past-eight-in-flight: when it gives up on the ones past those (mock-slow answers in about 2 s) */
export const SHED_AFTER_MS = 1_500;

/** Injected faults of PROFILE §7 limits. */
export const LIMITS_FAULTS: FaultRecord = {
  /* §7 limits */
  "no-retry-after": fault("limits.429", "429 RATE_LIMIT_EXCEEDED carries no Retry-After", (app) => {
    app.addHook("onSend", async (_req, reply, payload) => {
      reply.removeHeader(HEADERS.retryAfter);
      return payload;
    });
  }),
  "rate-limited-delete-deletes": fault("limits.429", "a DELETE answered 429 still deletes the agent", (app, ctx) => {
    app.addHook("onSend", async (req, reply, payload) => {
      const account = accountOf(req);
      if (endpointOf(req) === "deleteAgent" && reply.statusCode === 429 && account) ctx.store.delete(account, agentIdParam(req));
      return payload;
    });
  }),
  "remaining-off-by-one": fault("limits.headers", "X-RateLimit-Remaining is one more than is left", (app) => {
    app.addHook("onSend", async (_req, reply, payload) => {
      const remaining = reply.getHeader(HEADERS.remaining);
      if (remaining !== undefined) reply.header(HEADERS.remaining, String(Number(remaining) + 1));
      return payload;
    });
  }),
  "reset-in-milliseconds": fault("limits.headers", "X-RateLimit-Reset is in milliseconds", (app) => {
    app.addHook("onSend", async (_req, reply, payload) => {
      const reset = reply.getHeader(HEADERS.reset);
      if (reset !== undefined) reply.header(HEADERS.reset, String(Number(reset) * 1000));
      return payload;
    });
  }),
  // a header 5 s off the server's own clock (its Date): hidden from a harness that tolerated any
  // difference between clocks, caught by one that judges it on the service's clock (PROFILE §7)
  "reset-behind-clock": fault("limits.headers", "X-RateLimit-Reset is 5 s behind the server's clock", (app) => {
    app.addHook("onSend", async (_req, reply, payload) => {
      const reset = reply.getHeader(HEADERS.reset);
      if (reset !== undefined) reply.header(HEADERS.reset, String(Number(reset) - 5));
      return payload;
    });
  }),
  // PROFILE §7: Remaining is what is left now; this one always reads a full bucket, so pacing
  // that trusted it would send into an empty bucket window after window
  "remaining-never-decrements": fault("limits.headers", "X-RateLimit-Remaining never goes down", (app) => {
    app.addHook("onSend", async (_req, reply, payload) => {
      const limit = reply.getHeader(HEADERS.limit);
      if (limit !== undefined && reply.statusCode !== 429) reply.header(HEADERS.remaining, String(limit));
      return payload;
    });
  }),
  "create-bucket-of-11": fault("limits.endpoint-bucket", "the Create bucket admits 11 per window", (_app, ctx) => {
    rewriteBuckets(ctx, (buckets, _principal, req) =>
      buckets.map((b) => (b.scope === "keyEndpoint" && endpointOf(req) === "createAgent" ? { ...b, size: b.size + 1 } : b)),
    );
  }),
  "agent-bucket-per-key": fault("limits.agent-bucket", "the per-agent message bucket is kept per key", (_app, ctx) => {
    rewriteBuckets(ctx, (buckets, principal) =>
      buckets.map((b) => (b.scope === "agentMessages" ? { ...b, key: `${b.key}:${principal.keyHash}` } : b)),
    );
  }),
  "tier-per-endpoint": fault("limits.tier", "the tier bucket is counted per endpoint instead of across them", (_app, ctx) => {
    rewriteBuckets(ctx, (buckets) =>
      buckets.map((b) => (b.scope === "tier" && buckets[0] ? { ...b, key: `${b.key}:${buckets[0].key}` } : b)),
    );
  }),
  "tier-split-messages-apart": fault(
    "limits.tier",
    "messages count in a tier of their own, apart from the account's other requests",
    (_app, ctx) => {
      rewriteBuckets(ctx, (buckets, _principal, req) =>
        endpointOf(req) === "sendMessage"
          ? buckets.map((b) => (b.scope === "tier" ? { ...b, key: `${b.key}:messages` } : b))
          : buckets,
      );
    },
  ),
  // PROFILE §7 "a bucket never admits more than its size between two refills": this tier keeps
  // counting and says so (Limit the tier, Remaining 0, one Reset) but never refuses
  "tier-admits-past-limit": fault(
    "limits.tier",
    "an empty tier bucket still admits, while its headers say it is empty",
    (_app, ctx) => {
      wrap(ctx.limiter, "admit", (orig) => (buckets) => {
        const tier = buckets.find((b) => b.scope === "tier");
        if (!tier || ctx.limiter.tightest([tier]).remaining > 0) return orig(buckets);
        return orig(buckets.filter((b) => b !== tier));
      });
    },
  ),
  "tier-shared-by-accounts": fault("limits.tier", "one tier bucket is counted for every account together", (_app, ctx) => {
    rewriteBuckets(ctx, (buckets) => buckets.map((b) => (b.scope === "tier" ? { ...b, key: "t:every-account" } : b)));
  }),
  // PROFILE §7: every authenticated request is counted "whatever its outcome"; this one lets a key
  // without the permission knock for free (each refusal counted in buckets of its own, never seen again)
  "forbidden-not-counted": fault("limits.endpoint-bucket", "a request refused 403 is counted in no bucket", (_app, ctx) => {
    let refusals = 0;
    rewriteBuckets(ctx, (buckets, principal, req) => {
      const endpoint = endpointOf(req);
      if (!endpoint || principal.permissions.has(ENDPOINTS[endpoint].permission)) return buckets;
      // an empty bucket still refuses it first (429 beats 403): only the counting is missing
      if (buckets.some((b) => ctx.limiter.tightest([b]).remaining === 0)) return buckets;
      refusals++;
      return buckets.map((b) => ({ ...b, key: `${b.key}:forbidden-${refusals}` }));
    });
  }),
  "rate-limited-counted": fault("limits.429-not-counted", "a 429 is counted in the buckets that were not empty", (_app, ctx) => {
    wrap(ctx.limiter, "admit", (orig) => (buckets) => {
      const result = orig(buckets);
      if (!result.admitted) {
        const open = buckets.filter((b) => ctx.limiter.tightest([b]).remaining > 0);
        if (open.length) orig(open);
      }
      return result;
    });
  }),
  // PROFILE §7: a 429 from the cap of messages in flight is, like every RATE_LIMIT_EXCEEDED, counted nowhere
  "concurrency-refusal-counted": fault(
    "limits.429-not-counted",
    "a 429 from the message concurrency cap is counted in the message's buckets",
    (_app, ctx) => {
      rewriteBuckets(ctx, (buckets, principal, req) => {
        if (endpointOf(req) === "sendMessage" && !ctx.gate.available(agentSlotKey(principal, agentIdParam(req))))
          ctx.limiter.admit(buckets);
        return buckets;
      });
    },
  ),
  // PROFILE §7: a concurrency 429's X-RateLimit-* describe the buckets as on any response; no bucket is empty
  "concurrency-refusal-reads-empty": fault(
    "limits.headers",
    "a 429 from the message concurrency cap says X-RateLimit-Remaining 0",
    (app) => {
      app.addHook("onSend", async (req, reply, payload) => {
        if (
          endpointOf(req) === "sendMessage" &&
          reply.statusCode === 429 &&
          reply.getHeader(HEADERS.retryAfter) === String(RATE_LIMITS.concurrencyRetryAfterSeconds)
        )
          reply.header(HEADERS.remaining, "0");
        return payload;
      });
    },
  ),
  "bucket-stays-locked": fault("limits.recovery", "an emptied bucket keeps refusing after its reset", (_app, ctx) => {
    const locked = new Set<string>();
    wrap(ctx.limiter, "admit", (orig) => (buckets) => {
      const held = buckets.find((b) => locked.has(b.key));
      if (held) {
        const headers = { ...ctx.limiter.tightest([held]), remaining: 0 };
        return { admitted: false, headers, retryAfterSeconds: ctx.options.windowSeconds };
      }
      const result = orig(buckets);
      if (!result.admitted) for (const b of buckets) if (ctx.limiter.tightest([b]).remaining === 0) locked.add(b.key);
      return result;
    });
  }),
  // PROFILE §7: a bucket admits its size between refills. This Create bucket refuses the sixth
  // create of each window although the fifth's answer said 5 left: one refusal a window, the
  // sort a drain might take for another client's, which only the service's own count proves wrong
  "create-refused-with-room": fault(
    "limits.endpoint-bucket",
    "the Create bucket refuses the 6th create of a window while Remaining said 5 left",
    (_app, ctx) => {
      wrap(ctx.limiter, "admit", (orig) => (buckets) => {
        const result = orig(buckets);
        const create = buckets.find((b) => b.scope === "keyEndpoint" && b.key.endsWith(":createAgent"));
        if (!result.admitted || create === undefined) return result;
        const state = ctx.limiter.tightest([create]);
        if (state.size - state.remaining !== 6) return result;
        const retryAfterSeconds = Math.max(1, Math.ceil((state.resetAt - ctx.clock.now()) / 1000));
        return { admitted: false, headers: { ...state, remaining: 0 }, retryAfterSeconds };
      });
    },
  ),
  // The same refusal with the bucket's own count kept true (a refused create is counted nowhere,
  // Remaining stays 5): the shape a burst proves against another client's spending, which would
  // show in that count; the one above counts its refusal, which a burst cannot tell from another
  // client's request (one request at a time can)
  "create-refused-uncounted": fault(
    "limits.endpoint-bucket",
    "the Create bucket refuses every create past the 5th, counted nowhere, while Remaining says 5",
    (_app, ctx) => {
      wrap(ctx.limiter, "admit", (orig) => (buckets) => {
        const create = buckets.find((b) => b.scope === "keyEndpoint" && b.key.endsWith(":createAgent"));
        if (create === undefined) return orig(buckets);
        const state = ctx.limiter.tightest([create]);
        if (state.size - state.remaining < 5) return orig(buckets);
        const retryAfterSeconds = Math.max(1, Math.ceil((state.resetAt - ctx.clock.now()) / 1000));
        return { admitted: false, headers: { ...state, remaining: 0 }, retryAfterSeconds };
      });
    },
  ),
  // PROFILE §7: a request counts once in each of its buckets. This Delete bucket counts each
  // delete twice, its Remaining telling the truth (two fewer a request): a bucket of 10 admits 5. A
  // burst's gap looks like another client's spending; only one request at a time, each taking the
  // same two, shows it is the service's
  "delete-counted-twice": fault("limits.endpoint-bucket", "the Delete bucket counts each delete twice", (_app, ctx) => {
    wrap(ctx.limiter, "admit", (orig) => (buckets) => {
      const result = orig(buckets);
      const del = buckets.find((b) => b.scope === "keyEndpoint" && b.key.endsWith(":deleteAgent"));
      if (result.admitted && del) orig([del]);
      return result;
    });
  }),
  "concurrency-unlimited": fault("limits.concurrency", "Send Message concurrency is not capped", (_app, ctx) => {
    ctx.gate.available = () => true;
    ctx.gate.tryAcquire = () => () => {};
  }),
  // PROFILE §7: a slot frees when its exchange ends, a spent budget included
  "budget-keeps-slot": fault(
    "limits.concurrency",
    "the slot of a message whose budget ran out stays taken for another budget",
    (_app, ctx) => {
      const budgetMs = ctx.options.messageTimeoutSeconds * 1000;
      // an exchange the budget ended: one that lasted about the budget. Not "at least": the budget's
      // timer counts from the event loop's cached time, which a loaded tick leaves behind the wall
      // clock, so on a busy runner it ends an exchange a few ms short of the budget by Date.now()
      // (the fault then went unseen in a CI run). Every other exchange ends far sooner (mock-slow's 2 s)
      const endedByBudget = (lastedMs: number) => lastedMs >= budgetMs - BUDGET_END_SLACK_MS;
      wrap(ctx.gate, "tryAcquire", (tryAcquire) => (key) => {
        const release = tryAcquire(key);
        if (!release) return release;
        const acquiredAt = ctx.clock.now();
        return () => {
          if (endedByBudget(ctx.clock.now() - acquiredAt)) ctx.clock.setTimer(budgetMs, release);
          else release();
        };
      });
    },
  ),
  // PROFILE §7: a slot frees when its exchange ends, "client gone" included
  "gone-client-keeps-slot": fault(
    "limits.concurrency",
    "a client that goes away keeps its slot until its reply would have ended (mock-slow: about 2 s)",
    (_app, ctx) => {
      const heldMs = MESSAGE_TIMING.slowModelSeconds * 1000;
      wrap(ctx.gate, "tryAcquire", (tryAcquire) => (key) => {
        const release = tryAcquire(key);
        if (!release) return release;
        const acquiredAt = ctx.clock.now();
        // the guard frees the slot on the response's "close", whose listener runs with the response as
        // `this`: a response not finished by then lost its client
        return function (this: { writableFinished?: boolean } | undefined) {
          const left = acquiredAt + heldMs - ctx.clock.now();
          if (this?.writableFinished === false && left > 0) ctx.clock.setTimer(left, release);
          else release();
        };
      });
    },
  ),
  // PROFILE §7: an agent holds 10 exchanges at once; §5: one ends with AGENT_UNAVAILABLE only for an
  // agent not active or a spent budget. A service shedding load early keeps the cap's 429s right
  "sheds-past-eight-in-flight": fault(
    "limits.concurrency",
    `a message past ${HELD_TO_THE_END} in flight to an agent is admitted, then given up after ${SHED_AFTER_MS / 1000} s (503)`,
    (app, ctx) => {
      const inFlight = new Map<string, number>();
      const shed = new WeakSet<FastifyRequest>();
      // after the guard's hook: only the messages it admitted reach it, each holding a slot until its close
      app.addHook("onRequest", async (req, reply) => {
        if (endpointOf(req) !== "sendMessage" || !req.principal) return;
        const key = agentSlotKey(req.principal, agentIdParam(req));
        const held = (inFlight.get(key) ?? 0) + 1;
        inFlight.set(key, held);
        if (held > HELD_TO_THE_END) shed.add(req);
        reply.raw.once("close", () => inFlight.set(key, (inFlight.get(key) ?? 1) - 1));
      });
      const before = ctx.seam.messageBudgetMs;
      ctx.seam.messageBudgetMs = (ms, req) => (shed.has(req) ? SHED_AFTER_MS : before(ms, req));
    },
  ),
  "quota-not-enforced": fault("limits.quota", "the message quota is never spent", (_app, ctx) => {
    ctx.spendQuota = () => true;
  }),
  "oversize-body-500": fault("limits.body-size", "a body over 64 KiB is answered 500", (app) => {
    rewriteJson(app, (body, _req, reply) => {
      if (reply.statusCode === 413) replaceError(reply, body, 500, "INTERNAL_ERROR");
    });
  }),
  "content-type-ignored": fault(
    "limits.content-type",
    "a POST or PATCH body is read as JSON whatever its Content-Type",
    (app) => {
      app.addHook("preHandler", async (req) => {
        if (req.method === "POST" || req.method === "PATCH") req.headers["content-type"] = "application/json";
      });
    },
  ),
};
