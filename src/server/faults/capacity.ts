import { setTimeout as sleep } from "node:timers/promises";
import type { RateBucket } from "../ratelimit.js";
import { type FaultRecord, fault } from "./tools.js";

/**
 * Defects only many tenants at once reveal: each stays invisible while few accounts are active
 * (every functional, property and load check uses a handful) and shows when dozens are. The
 * capacity scenario (`load --scenario capacity --profile noisy-neighbour`) catches each.
 */

/**
 * Accounts with a request in the last window, from which the many-tenant defects switch on:
 * more than a verify run of the reference ever serves (its accounts per worker times its
 * workers, and the accounts every worker shares; the meta suite checks), so every other suite
 * passes against each.
 */
export const MANY_TENANTS = 45;

/** refusal-storm-slows-everyone: refusals a second that wake it, and the wait it adds */
const REFUSAL_STORM_PER_SECOND = 200;
const STORM_DELAY_MS = 300;
/**
 * …counted over the last quarter of a second: a storm's harm ends with the storm, inside the half
 * second a noisy-neighbour segment leaves after its flood (a second's memory reached into the next
 * shape's segment, which then caught the fault too)
 */
const REFUSAL_MEMORY_MS = 250;
/** unknown-key-global-lock: how long a 401 holds the lock after its answer */
const LOCK_MS = 300;
/** budget-end-stalls-server */
const STALL_MS = 400;
/** connection-cap: above what a verify run, the steady drive (64) and a storm (128) open at once, below the connection hog's 256 sockets */
const CONNECTION_CAP = 220;

/** The faults only many tenants reveal. */
export const MANY_TENANT_FAULTS: FaultRecord = {
  "refusals-charge-neighbour-tier": fault(
    "limits.tier",
    `with ${MANY_TENANTS}+ accounts active, a refusal is counted in the tier of the account served before it`,
    (_app, ctx) => {
      const limiter = ctx.limiter;
      const admit = limiter.admit.bind(limiter);
      const windowMs = ctx.options.windowSeconds * 1000;
      /** each account's tier bucket → when it last had a request */
      const active = new Map<string, number>();
      let lastServed: RateBucket | undefined;
      limiter.admit = (buckets) => {
        const now = ctx.clock.now();
        const tier = buckets.find((b) => b.scope === "tier");
        if (tier) active.set(tier.key, now);
        const answer = admit(buckets);
        if (answer.admitted) {
          lastServed = tier;
          return answer;
        }
        for (const [key, at] of active) if (now - at >= windowMs) active.delete(key);
        // a shared "current tenant" slot: the refusal is charged to whoever was served last
        if (active.size >= MANY_TENANTS && lastServed && lastServed.key !== tier?.key) admit([lastServed]);
        return answer;
      };
    },
  ),
};

/**
 * The faults a runaway client reveals: each wakes only under one flood shape of noisy-neighbour
 * (refusal storm, unknown-key storm, stream hog, connection hog, in this order) and harms every
 * other tenant then.
 */
export const FLOOD_FAULTS: FaultRecord = {
  // a limiter whose refusals contend for what every request needs: harmless at a few 429s a second
  "refusal-storm-slows-everyone": fault(
    "limits.tier",
    `while over ${REFUSAL_STORM_PER_SECOND} refusals a second (in the last ${REFUSAL_MEMORY_MS} ms), every request waits ${STORM_DELAY_MS} ms`,
    (app, ctx) => {
      const refusedAt: number[] = [];
      let first = 0;
      app.addHook("onSend", async (_req, reply, payload) => {
        if (reply.statusCode === 429) refusedAt.push(ctx.clock.now());
        return payload;
      });
      app.addHook("onRequest", async () => {
        const now = ctx.clock.now();
        while (first < refusedAt.length && refusedAt[first]! < now - REFUSAL_MEMORY_MS) first++;
        if (first > 10_000) {
          refusedAt.splice(0, first);
          first = 0;
        }
        if (refusedAt.length - first > (REFUSAL_STORM_PER_SECOND * REFUSAL_MEMORY_MS) / 1000) await sleep(STORM_DELAY_MS);
      });
    },
  ),
  // an unknown key's path that takes a lock every request waits on (a revoked-keys table, say)
  "unknown-key-global-lock": fault(
    "limits.tier",
    `an unknown key's 401 holds a server-wide lock ${LOCK_MS} ms that every request waits on`,
    (app) => {
      let lock: Promise<unknown> = Promise.resolve();
      app.addHook("onRequest", async () => {
        await lock;
      });
      app.addHook("onSend", async (_req, reply, payload) => {
        // the latest holder's: a storm keeps it held, and it frees LOCK_MS after the storm
        if (reply.statusCode === 401) lock = sleep(LOCK_MS);
        return payload;
      });
    },
  ),
  // cleaning up after a reply stopped at its time budget holds the whole server (a synchronous flush, say)
  "budget-end-stalls-server": fault(
    "limits.concurrency",
    `a message stopped at its time budget stalls every request for ${STALL_MS} ms`,
    (app) => {
      let stalled: Promise<unknown> = Promise.resolve();
      app.addHook("onRequest", async () => {
        await stalled;
      });
      app.addHook("onSend", async (_req, reply, payload) => {
        if (reply.statusCode === 503) stalled = sleep(STALL_MS);
        return payload;
      });
    },
  ),
  // a cap on open connections that idle keep-alive sockets fill: a new client is turned away
  "connection-cap": fault("limits.tier", `past ${CONNECTION_CAP} open connections the server drops new ones`, (app) => {
    app.server.maxConnections = CONNECTION_CAP;
  }),
};

export const CAPACITY_FAULTS: FaultRecord = { ...MANY_TENANT_FAULTS, ...FLOOD_FAULTS };
