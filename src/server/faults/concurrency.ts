import type { IncomingMessage } from "node:http";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { HEADERS, updateAgentBodySchema } from "../../contract/index.js";
import { agentIdParam } from "../http.js";
import type { BucketState } from "../ratelimit.js";
import { accountOf, endpointOf, type FaultRecord, fault, jsonBody, type Obj } from "./tools.js";

/**
 * Defects only concurrency shows: one request at a time, each answers like the clean server, so
 * the functional and property suites pass; under load the concurrency checks of the load
 * scenarios (src/load/concurrency-checks.ts) catch each, and only its own check does.
 */

/** How long the read-modify-write's store round trip takes. */
const STORE_ROUND_TRIP_MS = 20;

/** The top-level fields a stale read writes back over a concurrent update (none a PATCH may not send). */
const RESTORED_FIELDS = ["name", "bio", "personality", "knowledge", "goals", "plugins", "modelSettings"] as const;

/** Fields a half-applied update writes first: plain values any valid PATCH may carry alone (no platform: its `enabled` rule spans fields). */
const WRITTEN_FIRST = ["name", "bio", "personality", "plugins"] as const;

/** A hook before an authenticated PATCH's route reads its body (a JSON object). */
function beforeUpdate(app: FastifyInstance, hook: (req: FastifyRequest, body: Obj, account: string) => Promise<void>): void {
  app.addHook("preHandler", async (req: FastifyRequest) => {
    const body = endpointOf(req) === "updateAgent" ? jsonBody(req) : undefined;
    const account = accountOf(req);
    if (body && account) await hook(req, body, account);
  });
}

export const CONCURRENCY_FAULTS: FaultRecord = {
  "request-id-of-pipelined-neighbour": fault(
    "transport.request-id-echo",
    "an answer carries the X-Request-Id of the last request read on its connection (pipelining)",
    (app) => {
      // the client's id kept per connection, not per request: set as each request is read, before
      // fastify sees it (a refusal may be answered within fastify's own listener), read when an answer leaves
      const lastRead = new WeakMap<object, string>();
      app.server.prependListener("request", (raw: IncomingMessage) => {
        const sent = raw.headers[HEADERS.requestId];
        if (typeof sent === "string") lastRead.set(raw.socket, sent);
      });
      app.addHook("onSend", async (req, reply, payload) => {
        // looked up after an await: by then the requests written behind it on the connection are read too
        await null;
        const id = lastRead.get(req.raw.socket);
        // only where the client's own id was to be echoed (not a key, not malformed: PROFILE §1, §6)
        if (id !== undefined && req.headers[HEADERS.requestId] === req.id) reply.header(HEADERS.requestId, id);
        return payload;
      });
    },
  ),
  "update-read-modify-write": fault(
    "update.merge-patch",
    "a PATCH writes back what it read 20 ms earlier: a concurrent PATCH of another field is lost",
    (app, ctx) =>
      beforeUpdate(app, async (req, body, account) => {
        const read = ctx.store.get(account, agentIdParam(req));
        // a store round trip between the read and the write (a database's, say)
        await new Promise((resolve) => setTimeout(resolve, STORE_ROUND_TRIP_MS));
        if (!read) return;
        // the write: every field as read, the patch's own on top (the same record when nothing ran in between)
        for (const field of RESTORED_FIELDS) if (!(field in body)) body[field] = read[field];
        req.body = Buffer.from(JSON.stringify(body));
      }),
  ),
  "update-applied-in-parts": fault(
    "update.merge-patch",
    "a PATCH of two fields or more writes the first 20 ms before the rest: a read between sees half of it",
    (app, ctx) =>
      beforeUpdate(app, async (req, body, account) => {
        // only a PATCH the route will take whole (so sequential clients never see the difference)
        if (Object.keys(body).length < 2 || "platforms" in body) return;
        if (!updateAgentBodySchema.safeParse(body).success) return;
        const first = WRITTEN_FIRST.find((field) => field in body);
        const part = first && updateAgentBodySchema.safeParse({ [first]: body[first] });
        if (!part?.success) return;
        ctx.store.update(account, agentIdParam(req), part.data);
        await new Promise((resolve) => setTimeout(resolve, STORE_ROUND_TRIP_MS));
      }),
  ),
  "remaining-ignores-in-flight": fault(
    "limits.headers",
    "X-RateLimit-Remaining leaves out the requests in flight: only those answered are subtracted",
    (app, ctx) => {
      const inFlight = new Map<string, number>();
      const counted = new WeakSet<FastifyRequest>();
      // runs after the guard's: only requests it admitted and let through reach it
      app.addHook("onRequest", async (req, reply) => {
        const buckets = req.rateBuckets;
        if (!buckets) return;
        counted.add(req);
        for (const b of buckets) inFlight.set(b.key, (inFlight.get(b.key) ?? 0) + 1);
        reply.raw.once("close", () => {
          for (const b of buckets) inFlight.set(b.key, (inFlight.get(b.key) ?? 1) - 1);
        });
      });
      app.addHook("onSend", async (req, reply, payload) => {
        const buckets = req.rateBuckets;
        if (!buckets || !counted.has(req)) return payload;
        // the others in flight given back: the bucket as if only the answered requests had been counted
        let best: BucketState | undefined;
        for (const b of buckets) {
          const s = ctx.limiter.tightest([b]);
          const seen = { ...s, remaining: Math.min(s.size, s.remaining + (inFlight.get(b.key) ?? 1) - 1) };
          if (!best || seen.remaining < best.remaining) best = seen;
        }
        if (best) {
          reply.header(HEADERS.limit, String(best.size));
          reply.header(HEADERS.remaining, String(best.remaining));
          reply.header(HEADERS.reset, String(Math.ceil(best.resetAt / 1000)));
        }
        return payload;
      });
    },
  ),
};
