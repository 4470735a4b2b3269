import { HEADERS, isRecord } from "../../contract/index.js";
import { sendError } from "../http.js";
import { rateBucketsOf } from "../ratelimit.js";
import { type FaultRecord, fault, rewriteJson, trackAccounts, wrap } from "./tools.js";

/** Injected faults of PROFILE §6 authentication and permissions. */
export const AUTH_FAULTS: FaultRecord = {
  /* §6 auth */
  "lowercase-bearer-rejected": fault("auth.scheme-case", "only the exact scheme 'Bearer' is accepted", (app) => {
    app.addHook("onRequest", async (req, reply) => {
      if (req.routeOptions.config?.public || (req.headers.authorization ?? "").startsWith("Bearer ")) return;
      reply.header(HEADERS.wwwAuthenticate, "Bearer");
      sendError(reply, "UNAUTHORIZED", "A valid API key is required");
      return reply;
    });
  }),
  "no-www-authenticate": fault("auth.required", "401 answers carry no WWW-Authenticate", (app) => {
    app.addHook("onSend", async (_req, reply, payload) => {
      reply.removeHeader(HEADERS.wwwAuthenticate);
      return payload;
    });
  }),
  "bad-scheme-counted": fault(
    "auth.not-counted",
    "a known key sent with a wrong scheme (401) is counted in its tier",
    (app, ctx) => {
      app.addHook("onSend", async (req, reply, payload) => {
        if (reply.statusCode !== 401) return payload;
        const presented = (req.headers.authorization ?? "").trim().split(/\s+/).at(-1) ?? "";
        const principal = ctx.keyRing.lookup(presented);
        if (principal) ctx.limiter.admit(rateBucketsOf(principal, undefined, "")); // no endpoint: the tier bucket alone
        return payload;
      });
    },
  ),
  "key-in-403": fault("auth.no-key-echo", "a 403 names the presented key in its details", (app) => {
    rewriteJson(app, (body, req, reply) => {
      if (reply.statusCode !== 403 || !isRecord(body.error)) return;
      const presented = (req.headers.authorization ?? "").trim().split(/\s+/).at(-1);
      body.error.details = [{ field: "Authorization", issue: `key ${presented} lacks the permission` }];
    });
  }),
  "key-in-header": fault("auth.no-key-echo", "every answer names the presented key in a header", (app) => {
    app.addHook("onSend", async (req, reply, payload) => {
      const presented = (req.headers.authorization ?? "").trim().split(/\s+/).at(-1);
      if (presented) reply.header("x-debug-key", presented);
      return payload;
    });
  }),
  "cross-account-read": fault("auth.isolation", "GET shows another account's agent", (_app, ctx) => {
    const accounts = trackAccounts(ctx.store);
    wrap(ctx.store, "get", (orig) => (accountId, id) => {
      for (const a of [accountId, ...accounts]) {
        const found = orig(a, id);
        if (found) return found;
      }
      return undefined;
    });
  }),
  "send-without-permission": fault("auth.permissions", "messages:send is not checked", (_app, ctx) => {
    wrap(ctx.keyRing, "lookup", (orig) => (presented) => {
      const p = orig(presented);
      return p && { ...p, permissions: new Set([...p.permissions, "messages:send" as const]) };
    });
  }),
};
