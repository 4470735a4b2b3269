import { randomBytes } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import {
  AGENT_DEFAULTS,
  compareCodePoints,
  createAgentBodySchema,
  type EndpointId,
  HEADERS,
  MERGE_PATCH_CONTENT_TYPE,
  PLATFORMS,
  paginationFor,
  READ_ONLY_FIELDS,
  updateAgentBodySchema,
} from "../contract/index.js";
import type { Clock } from "./clock.js";
import type { ServerContext } from "./context.js";
import { agentIdParam, parseJsonBody, sendError } from "./http.js";
import { newId } from "./store.js";

/**
 * Injected defects: each breaks one PROFILE clause, so the harness can prove it catches it.
 * They wrap the server from outside (hooks, wrapped store and limiter methods) and never
 * appear in its normal code paths.
 */
export interface Fault {
  readonly clause: string;
  readonly description: string;
  install(app: FastifyInstance, ctx: ServerContext): void;
}

/* ------------------------------------------------------------------ tools */

type Obj = Record<string, unknown>;
type Store = ServerContext["store"];

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const endpointOf = (req: FastifyRequest): EndpointId | undefined => req.routeOptions.config?.endpoint;
const accountOf = (req: FastifyRequest): string | undefined => req.principal?.account.id;

/** The request body as JSON, when it is a JSON object (bodies reach routes as raw buffers). */
function jsonBody(req: FastifyRequest): Obj | undefined {
  if (!Buffer.isBuffer(req.body)) return undefined;
  try {
    const value: unknown = JSON.parse(req.body.toString("utf8"));
    return isObj(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

const setJsonBody = (req: FastifyRequest, body: Obj) => {
  req.body = Buffer.from(JSON.stringify(body));
};

/** Rewrite a body before its route reads it. */
function rewriteBody(app: FastifyInstance, endpoints: readonly EndpointId[], rewrite: (body: Obj, req: FastifyRequest) => void) {
  app.addHook("preHandler", async (req) => {
    const endpoint = endpointOf(req);
    if (!endpoint || !endpoints.includes(endpoint)) return;
    const body = jsonBody(req);
    if (!body) return;
    rewrite(body, req);
    setJsonBody(req, body);
  });
}

/** Rewrite JSON answers on their way out. */
function rewriteJson(app: FastifyInstance, rewrite: (body: Obj, req: FastifyRequest, reply: FastifyReply) => void) {
  app.addHook("onSend", async (req, reply, payload) => {
    if (typeof payload !== "string" || !String(reply.getHeader("content-type") ?? "").includes("json")) return payload;
    const body: unknown = JSON.parse(payload);
    if (!isObj(body)) return payload;
    rewrite(body, req, reply);
    return JSON.stringify(body);
  });
}

/** Replace an error answer with another one (status and envelope). */
function replaceError(reply: FastifyReply, body: Obj, status: number, code: string) {
  reply.code(status);
  for (const key of Object.keys(body)) delete body[key];
  Object.assign(body, { success: false, error: { code, message: "replaced by an injected fault" } });
}

const errorCode = (body: Obj) => (isObj(body.error) ? body.error.code : undefined);

/** The agent records in a success answer (one, or a list). */
function agentsIn(body: Obj): Obj[] {
  if (body.success !== true) return [];
  const data = body.data;
  const items = Array.isArray(data) ? data : [data];
  return items.filter((a): a is Obj => isObj(a) && "createdAt" in a && "name" in a);
}

/**
 * Rewrite the event-stream frames of each Send Message (streams bypass onSend). `perStream`
 * makes the rewriter of one response; it returns the frame to write, or null to drop it.
 */
function rewriteStream(app: FastifyInstance, perStream: () => (frame: string) => string | null) {
  app.addHook("preHandler", async (req, reply) => {
    if (endpointOf(req) !== "sendMessage") return;
    const rewrite = perStream();
    const raw = reply.raw;
    const write = raw.write.bind(raw) as (chunk: string) => boolean;
    raw.write = ((chunk: unknown) => {
      if (typeof chunk !== "string") return write(chunk as string);
      const out = rewrite(chunk);
      return out === null ? true : write(out);
    }) as typeof raw.write;
  });
}

/** Wrap one method of an object in place. */
function wrap<T extends object, K extends keyof T>(target: T, key: K, make: (orig: T[K]) => T[K]): void {
  const orig = (target[key] as (...args: unknown[]) => unknown).bind(target) as T[K];
  target[key] = make(orig);
}

/** The accounts that have created agents (for defects that reach across accounts). */
function trackAccounts(store: Store): Set<string> {
  const accounts = new Set<string>();
  wrap(store, "create", (orig) => (accountId, body) => {
    accounts.add(accountId);
    return orig(accountId, body);
  });
  return accounts;
}

const ALL = Number.MAX_SAFE_INTEGER;
const BODY_KEYS = new Set([...Object.keys(createAgentBodySchema.shape), ...Object.keys(updateAgentBodySchema.shape)]);
const NESTED_KEYS: Record<string, string[]> = {
  personality: Object.keys(AGENT_DEFAULTS.personality),
  knowledge: Object.keys(AGENT_DEFAULTS.knowledge),
  goals: Object.keys(AGENT_DEFAULTS.goals),
  modelSettings: ["provider", "model", "temperature", "maxTokens"],
};

function withoutNulls(value: Obj): Obj {
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== null)
      .map(([k, v]) => [k, isObj(v) ? withoutNulls(v) : v]),
  );
}

const fault = (clause: string, description: string, install: Fault["install"]): Fault => ({ clause, description, install });

/* ------------------------------------------------------------------ faults */

const DEFINED: Record<string, Fault> = {
  /* §1 transport */
  "drop-request-id": fault("transport.request-id", "JSON answers carry no X-Request-Id", (app) => {
    app.addHook("onSend", async (_req, reply, payload) => {
      reply.removeHeader(HEADERS.requestId);
      return payload;
    });
  }),
  "request-id-not-echoed": fault("transport.request-id-echo", "a well-formed client X-Request-Id is replaced", (app) => {
    app.addHook("onSend", async (req, reply, payload) => {
      if (req.headers[HEADERS.requestId]) reply.header(HEADERS.requestId, newId("req"));
      return payload;
    });
  }),
  "json-as-text-plain": fault("transport.json-content-type", "JSON answers are labelled text/plain", (app) => {
    app.addHook("onSend", async (_req, reply, payload) => {
      if (String(reply.getHeader("content-type") ?? "").startsWith("application/json"))
        reply.header("content-type", "text/plain; charset=utf-8");
      return payload;
    });
  }),

  /* §2 envelopes */
  "total-pages-floor": fault("envelope.list", "totalPages is floor(total / limit)", (_app, ctx) => {
    wrap(ctx.store, "list", (orig) => (accountId, q) => {
      const r = orig(accountId, q);
      const totalPages = Math.floor(r.pagination.total / q.limit);
      return { ...r, pagination: { ...r.pagination, totalPages, hasMore: q.page < totalPages } };
    });
  }),
  "has-more-always-true": fault("envelope.list", "hasMore is true on every page", (_app, ctx) => {
    wrap(ctx.store, "list", (orig) => (accountId, q) => {
      const r = orig(accountId, q);
      return { ...r, pagination: { ...r.pagination, hasMore: true } };
    });
  }),
  "error-details-object": fault("envelope.error", "error details are an object keyed by field, not an array", (app) => {
    rewriteJson(app, (body) => {
      if (isObj(body.error) && Array.isArray(body.error.details))
        body.error.details = Object.fromEntries(
          (body.error.details as { field: string; issue: string }[]).map((d) => [d.field, d.issue]),
        );
    });
  }),

  /* §3 status ↔ code */
  "validation-422": fault("status.pairing", "INVALID_REQUEST is answered with status 422", (app) => {
    app.addHook("onSend", async (_req, reply, payload) => {
      if (reply.statusCode === 400) reply.code(422);
      return payload;
    });
  }),
  "malformed-query-500": fault("status.no-5xx-on-input", "a non-numeric page or limit crashes the list (500)", (app) => {
    app.addHook("preHandler", async (req) => {
      if (endpointOf(req) !== "listAgents") return;
      const q = req.query as Obj;
      for (const name of ["page", "limit"])
        if (typeof q[name] === "string" && Number.isNaN(Number.parseInt(q[name] as string, 10)))
          throw new TypeError(`cannot read ${name}`);
    });
  }),
  "lookup-before-rate-limit": fault(
    "status.precedence",
    "an unknown agent answers 404 even when a bucket is empty",
    (app, ctx) => {
      rewriteJson(app, (body, req, reply) => {
        const id = agentIdParam(req);
        const account = accountOf(req);
        if (
          reply.statusCode === 429 &&
          errorCode(body) === "RATE_LIMIT_EXCEEDED" &&
          id &&
          account &&
          !ctx.store.get(account, id)
        ) {
          reply.removeHeader(HEADERS.retryAfter);
          replaceError(reply, body, 404, "AGENT_NOT_FOUND");
        }
      });
    },
  ),

  /* §4 the record */
  "utf16-name-length": fault("record.lengths", "name length is counted in UTF-16 units (51 emoji are too long)", (app) => {
    app.addHook("preHandler", async (req, reply) => {
      const endpoint = endpointOf(req);
      if (endpoint !== "createAgent" && endpoint !== "updateAgent") return;
      const name = jsonBody(req)?.name;
      if (typeof name === "string" && name.length > 100) {
        sendError(reply, "INVALID_REQUEST", "The request has invalid fields", [{ field: "name", issue: "too long" }]);
        return reply;
      }
    });
  }),
  "token-echoed": fault("record.token-write-only", "agent records show the platform tokens", (app, ctx) => {
    const tokens = new Map<string, Obj>();
    const remember = (id: string, body: Obj) => {
      if (!isObj(body.platforms)) return;
      const kept = tokens.get(id) ?? {};
      for (const [p, v] of Object.entries(body.platforms)) if (isObj(v) && typeof v.token === "string") kept[p] = v.token;
      tokens.set(id, kept);
    };
    wrap(ctx.store, "create", (orig) => (accountId, body) => {
      const r = orig(accountId, body);
      if (r.ok) remember(r.agent.id, body as Obj);
      return r;
    });
    wrap(ctx.store, "update", (orig) => (accountId, id, patch) => {
      const r = orig(accountId, id, patch);
      if (r?.ok) remember(id, patch as Obj);
      return r;
    });
    rewriteJson(app, (body) => {
      for (const agent of agentsIn(body))
        for (const [p, token] of Object.entries(tokens.get(String(agent.id)) ?? {}))
          if (isObj(agent.platforms) && isObj(agent.platforms[p])) (agent.platforms[p] as Obj).token = token;
    });
  }),
  "unknown-keys-dropped": fault("record.unknown-keys", "unknown top-level keys in a body are silently dropped", (app) => {
    rewriteBody(app, ["createAgent", "updateAgent"], (body) => {
      for (const key of Object.keys(body))
        if (!BODY_KEYS.has(key) && !(READ_ONLY_FIELDS as readonly string[]).includes(key)) delete body[key];
    });
  }),
  "read-only-fields-ignored": fault(
    "record.read-only-fields",
    "id, createdAt, updatedAt in a body are silently dropped",
    (app) => {
      rewriteBody(app, ["createAgent", "updateAgent"], (body) => {
        for (const key of ["id", "createdAt", "updatedAt"]) delete body[key];
      });
    },
  ),
  "account-id-exposed": fault("record.shape", "agent records carry an extra accountId field", (app) => {
    rewriteJson(app, (body, req) => {
      for (const agent of agentsIn(body)) agent.accountId = accountOf(req);
    });
  }),
  "bio-default-null": fault("record.defaults", 'an empty bio reads null instead of the default ""', (app) => {
    rewriteJson(app, (body) => {
      for (const agent of agentsIn(body)) if (agent.bio === "") agent.bio = null;
    });
  }),
  "timestamps-without-ms": fault("record.timestamps", "createdAt/updatedAt lose their milliseconds", (app) => {
    rewriteJson(app, (body) => {
      for (const agent of agentsIn(body))
        for (const key of ["createdAt", "updatedAt"]) agent[key] = String(agent[key]).replace(/\.\d{3}Z$/, "Z");
    });
  }),

  /* §5 create */
  "create-on-invalid": fault("create.rejected-no-effect", "a create rejected as invalid still stores an agent", (app, ctx) => {
    app.addHook("onSend", async (req, reply, payload) => {
      const body = jsonBody(req);
      const account = accountOf(req);
      if (endpointOf(req) === "createAgent" && reply.statusCode === 400 && account && typeof body?.name === "string" && body.name)
        ctx.store.create(account, { name: body.name });
      return payload;
    });
  }),
  "create-ignores-inactive": fault("create.status", "status inactive on create is ignored (created active)", (_app, ctx) => {
    wrap(ctx.store, "create", (orig) => (accountId, body) => {
      const { status: _status, ...rest } = body;
      return orig(accountId, rest);
    });
  }),
  "platform-enabled-defaulted": fault(
    "create.platform-enabled",
    "a new platform without enabled is accepted as disabled",
    (app) => {
      rewriteBody(app, ["createAgent"], (body) => {
        if (isObj(body.platforms))
          for (const p of PLATFORMS) {
            const platform = body.platforms[p];
            if (isObj(platform) && !("enabled" in platform)) platform.enabled = false;
          }
      });
    },
  ),

  /* §5 list */
  "limit-clamped": fault("list.invalid-params", "limit above 100 is clamped to 100 instead of rejected", (app) => {
    app.addHook("preHandler", async (req) => {
      const q = req.query as Obj;
      if (endpointOf(req) === "listAgents" && typeof q.limit === "string" && /^\d+$/.test(q.limit) && Number(q.limit) > 100)
        q.limit = "100";
    });
  }),
  "tie-break-ascending": fault("list.order", "ties are broken by id ascending whatever the order", (_app, ctx) => {
    wrap(ctx.store, "list", (orig) => (accountId, q) => {
      const r = orig(accountId, q);
      const dir = q.order === "asc" ? 1 : -1;
      const data = [...r.data].sort(
        (x, y) => dir * compareCodePoints(String(x[q.sortBy]), String(y[q.sortBy])) || compareCodePoints(x.id, y.id),
      );
      return { ...r, data };
    });
  }),
  "past-end-zero-total": fault("list.past-end", "a page past the end reports total 0", (_app, ctx) => {
    wrap(ctx.store, "list", (orig) => (accountId, q) => {
      const r = orig(accountId, q);
      return r.data.length === 0 && q.page > 1 ? { ...r, pagination: paginationFor(q.page, q.limit, 0) } : r;
    });
  }),
  "page-overlap": fault("list.walk", "each page after the first repeats the previous page's last item", (_app, ctx) => {
    wrap(ctx.store, "list", (orig) => (accountId, q) => {
      const r = orig(accountId, q);
      if (q.page === 1) return r;
      const start = (q.page - 1) * q.limit - 1;
      const all = orig(accountId, { ...q, page: 1, limit: ALL }).data;
      return { ...r, data: all.slice(start, start + q.limit) };
    });
  }),
  "status-filter-ignored": fault("list.filter", "the status parameter does not filter", (_app, ctx) => {
    wrap(ctx.store, "list", (orig) => (accountId, q) => orig(accountId, { ...q, status: undefined }));
  }),
  "lists-all-accounts": fault("list.isolation", "lists include other accounts' agents", (_app, ctx) => {
    const accounts = trackAccounts(ctx.store);
    wrap(ctx.store, "list", (orig) => (accountId, q) => {
      const all = [accountId, ...[...accounts].filter((a) => a !== accountId)].flatMap(
        (a) => orig(a, { ...q, page: 1, limit: ALL }).data,
      );
      const start = (q.page - 1) * q.limit;
      return { data: all.slice(start, start + q.limit), pagination: paginationFor(q.page, q.limit, all.length) };
    });
  }),

  /* §5 get */
  "other-account-403": fault("get.not-found", "another account's agent answers 403 instead of 404", (app, ctx) => {
    const accounts = trackAccounts(ctx.store);
    rewriteJson(app, (body, req, reply) => {
      const id = agentIdParam(req);
      if (errorCode(body) === "AGENT_NOT_FOUND" && [...accounts].some((a) => a !== accountOf(req) && ctx.store.get(a, id)))
        replaceError(reply, body, 403, "FORBIDDEN");
    });
  }),

  /* §5 update */
  "merge-replaces-nested": fault("update.merge-patch", "a nested object in a patch replaces the stored one", (_app, ctx) => {
    wrap(ctx.store, "update", (orig) => (accountId, id, patch) => {
      const replaced: Obj = { ...patch };
      for (const [key, subKeys] of Object.entries(NESTED_KEYS)) {
        const value = replaced[key];
        if (isObj(value)) replaced[key] = { ...Object.fromEntries(subKeys.map((k) => [k, null])), ...value };
      }
      return orig(accountId, id, replaced as typeof patch);
    });
  }),
  "null-ignored": fault("update.merge-patch", "null in a patch is ignored instead of resetting the field", (_app, ctx) => {
    wrap(ctx.store, "update", (orig) => (accountId, id, patch) => orig(accountId, id, withoutNulls(patch) as typeof patch));
  }),
  "null-name-accepted": fault("update.null-required", "name: null in a patch is accepted as a no-op", (app) => {
    rewriteBody(app, ["updateAgent"], (body) => {
      if (body.name === null) delete body.name;
    });
  }),
  "status-error-settable": fault("update.status", "a client may PATCH status error", (app, ctx) => {
    rewriteBody(app, ["updateAgent"], (body, req) => {
      const account = accountOf(req);
      if (body.status !== "error" || !account) return;
      delete body.status;
      ctx.store.setStatus(account, agentIdParam(req), "error");
    });
  }),
  "merge-patch-type-rejected": fault("update.content-type", "application/merge-patch+json is refused with 415", (app) => {
    app.addHook("preHandler", async (req, reply) => {
      if (endpointOf(req) === "updateAgent" && String(req.headers["content-type"] ?? "").startsWith(MERGE_PATCH_CONTENT_TYPE)) {
        sendError(reply, "UNSUPPORTED_MEDIA_TYPE", "Content-Type must be application/json");
        return reply;
      }
    });
  }),
  "rejected-update-applies-valid-fields": fault(
    "update.rejected-no-effect",
    "a rejected patch still applies its valid fields",
    (app, ctx) => {
      app.addHook("preHandler", async (req) => {
        const body = jsonBody(req);
        const account = accountOf(req);
        if (endpointOf(req) !== "updateAgent" || !body || !account) return;
        const parsed = updateAgentBodySchema.safeParse(body);
        if (parsed.success) return;
        const bad = new Set(
          parsed.error.issues.flatMap((i) => (i.path.length ? [String(i.path[0])] : "keys" in i ? i.keys : [])),
        );
        const valid = Object.fromEntries(Object.entries(body).filter(([k]) => !bad.has(k)));
        const partial = updateAgentBodySchema.safeParse(valid);
        if (partial.success && Object.keys(valid).length)
          ctx.store.update(account, agentIdParam(req), partial.data as Parameters<Store["update"]>[2]);
      });
    },
  ),
  "noop-bumps-updated-at": fault("update.noop", "PATCH {} moves updatedAt", (_app, ctx) => {
    wrap(ctx.store, "update", (orig) => (accountId, id, patch) => {
      const r = orig(accountId, id, patch);
      if (!r?.ok || r.changed) return r;
      // touch the record: two status commits that cancel out
      const status = r.agent.status;
      ctx.store.setStatus(accountId, id, status === "active" ? "inactive" : "active");
      ctx.store.setStatus(accountId, id, status);
      return { ...r, agent: ctx.store.get(accountId, id) ?? r.agent, changed: true };
    });
  }),

  /* §5 delete */
  "soft-delete-listed": fault("delete.gone", "a deleted agent stays in lists", (_app, ctx) => {
    const deleted = new Set<string>();
    const gone = (accountId: string, id: string) => deleted.has(`${accountId}/${id}`);
    wrap(ctx.store, "delete", () => (accountId, id) => {
      if (gone(accountId, id) || !ctx.store.get(accountId, id)) return false;
      deleted.add(`${accountId}/${id}`);
      return true;
    });
    wrap(ctx.store, "get", (orig) => (accountId, id) => (gone(accountId, id) ? undefined : orig(accountId, id)));
    wrap(ctx.store, "update", (orig) => (accountId, id, patch) => (gone(accountId, id) ? undefined : orig(accountId, id, patch)));
    wrap(
      ctx.store,
      "conversation",
      (orig) => (accountId, agentId, userId, roomId) =>
        gone(accountId, agentId) ? undefined : orig(accountId, agentId, userId, roomId),
    );
  }),
  "delete-without-permission": fault("delete.forbidden", "any key may delete (agents:delete is not checked)", (_app, ctx) => {
    wrap(ctx.keyRing, "lookup", (orig) => (presented) => {
      const p = orig(presented);
      return p && { ...p, permissions: new Set([...p.permissions, "agents:delete" as const]) };
    });
  }),
  "delete-without-deleted-flag": fault("delete.ok", "DELETE answers data {id} without deleted: true", (app) => {
    rewriteJson(app, (body, req, reply) => {
      if (endpointOf(req) === "deleteAgent" && reply.statusCode === 200 && isObj(body.data)) delete body.data.deleted;
    });
  }),

  /* §5 send message */
  "message-null-accepted": fault("message.body", "null fields in a message body are ignored instead of rejected", (app) => {
    rewriteBody(app, ["sendMessage"], (body) => {
      for (const [key, value] of Object.entries(body)) if (value === null) delete body[key];
    });
  }),
  "reply-id-without-prefix": fault("message.reply", "message ids lack the msg_ prefix", (app) => {
    rewriteJson(app, (body, req) => {
      if (endpointOf(req) === "sendMessage" && body.success === true && isObj(body.data))
        body.data.id = String(body.data.id).replace(/^msg_/, "");
    });
  }),
  "conversation-ignores-room": fault(
    "message.conversation",
    "with a userId, the roomId does not separate conversations",
    (_app, ctx) => {
      wrap(
        ctx.store,
        "conversation",
        (orig) => (accountId, agentId, userId, roomId) =>
          orig(accountId, agentId, userId, userId === undefined ? roomId : undefined),
      );
    },
  ),
  "failed-exchange-takes-turn": fault("message.turn", "a failed exchange (500/503) still takes a turn", (app, ctx) => {
    app.addHook("onSend", async (req, reply, payload) => {
      const body = jsonBody(req);
      const account = accountOf(req);
      if (endpointOf(req) !== "sendMessage" || reply.statusCode < 500 || !body || !account) return payload;
      const userId = typeof body.userId === "string" ? body.userId : undefined;
      const roomId = typeof body.roomId === "string" ? body.roomId : undefined;
      if (userId !== undefined || roomId !== undefined) {
        const conversation = ctx.store.conversation(account, agentIdParam(req), userId, roomId);
        if (conversation) conversation.turns++;
      }
      return payload;
    });
  }),
  "done-text-mismatch": fault("message.stream", "the done event's text drops the last character of the deltas", (app) => {
    rewriteStream(app, () => (frame) => {
      const prefix = "event: done\ndata: ";
      if (!frame.startsWith(prefix)) return frame;
      const done = JSON.parse(frame.slice(prefix.length)) as Obj;
      done.text = String(done.text).slice(0, -1);
      return `${prefix}${JSON.stringify(done)}\n\n`;
    });
  }),
  "stream-error-dropped": fault(
    "message.stream-error",
    "a failure after the stream opened just closes it, no error event",
    (app) => {
      rewriteStream(app, () => (frame) => (frame.startsWith("event: error") ? null : frame));
    },
  ),
  "no-heartbeat": fault("message.heartbeat", "a silent stream carries no comment lines", (app) => {
    rewriteStream(app, () => (frame) => (frame.startsWith(":") ? null : frame));
  }),
  "budget-tripled": fault("message.budget", "the time budget is not enforced until three times its length", (_app, ctx) => {
    const budgetMs = ctx.options.messageTimeoutSeconds * 1000;
    const clock = ctx.options.clock;
    const slack: Clock = {
      now: () => clock.now(),
      setTimer: (ms, fn) => clock.setTimer(ms === budgetMs ? ms * 3 : ms, fn),
      clearTimer: (handle) => clock.clearTimer(handle),
    };
    ctx.options.clock = slack;
  }),
  "inactive-agent-answers": fault("message.unavailable", "a message wakes an inactive agent instead of 503", (app, ctx) => {
    app.addHook("preHandler", async (req) => {
      const account = accountOf(req);
      if (endpointOf(req) !== "sendMessage" || !account) return;
      const id = agentIdParam(req);
      if (ctx.store.get(account, id)?.status === "inactive") ctx.store.update(account, id, { status: "active" });
    });
  }),
  "model-error-keeps-status": fault("message.model-error", "a model failure leaves the agent active", (_app, ctx) => {
    wrap(ctx.store, "setStatus", (orig) => (accountId, id, status) => {
      if (status !== "error") orig(accountId, id, status);
    });
  }),

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
        if (principal) ctx.limiter.admit([{ key: `t:${principal.account.id}`, size: principal.account.tierLimit }]);
        return payload;
      });
    },
  ),
  "key-in-403": fault("auth.no-key-echo", "a 403 names the presented key in its details", (app) => {
    rewriteJson(app, (body, req, reply) => {
      if (reply.statusCode !== 403 || !isObj(body.error)) return;
      const presented = (req.headers.authorization ?? "").trim().split(/\s+/).at(-1);
      body.error.details = [{ field: "Authorization", issue: `key ${presented} lacks the permission` }];
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
  "create-bucket-of-11": fault("limits.endpoint-bucket", "the Create bucket admits 11 per window", (_app, ctx) => {
    wrap(
      ctx.limiter,
      "admit",
      (orig) => (buckets) => orig(buckets.map((b) => (b.key.endsWith(":createAgent") ? { ...b, size: b.size + 1 } : b))),
    );
  }),
  "agent-bucket-per-key": fault("limits.agent-bucket", "the per-agent message bucket is kept per key", (_app, ctx) => {
    let lastKeyHash = "";
    wrap(ctx.keyRing, "lookup", (orig) => (presented) => {
      const p = orig(presented);
      lastKeyHash = p?.keyHash ?? "";
      return p;
    });
    // the guard looks the key up and admits in one synchronous step, so lastKeyHash is this request's
    wrap(
      ctx.limiter,
      "admit",
      (orig) => (buckets) => orig(buckets.map((b) => (b.key.startsWith("a:") ? { ...b, key: `${b.key}:${lastKeyHash}` } : b))),
    );
  }),
  "tier-per-endpoint": fault("limits.tier", "the tier bucket is counted per endpoint instead of across them", (_app, ctx) => {
    wrap(
      ctx.limiter,
      "admit",
      (orig) => (buckets) =>
        orig(buckets.map((b) => (b.key.startsWith("t:") && buckets[0] ? { ...b, key: `${b.key}:${buckets[0].key}` } : b))),
    );
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
  "concurrency-unlimited": fault("limits.concurrency", "Send Message concurrency is not capped", (_app, ctx) => {
    ctx.gate.available = () => true;
    ctx.gate.tryAcquire = () => () => {};
  }),
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

  /* §8 status */
  "deactivate-wipes-config": fault("status.lifecycle", "setting status inactive resets the configuration", (_app, ctx) => {
    wrap(
      ctx.store,
      "update",
      (orig) => (accountId, id, patch) =>
        patch.status === "inactive"
          ? orig(accountId, id, { ...patch, bio: null, personality: null, knowledge: null, goals: null, plugins: null })
          : orig(accountId, id, patch),
    );
  }),

  /* §9 routing */
  "unknown-path-before-auth": fault("routing.unknown", "an unknown path answers 404 before authentication", (app) => {
    rewriteJson(app, (body, req, reply) => {
      const config = req.routeOptions.config;
      if (reply.statusCode === 401 && !config?.endpoint && !config?.public) {
        reply.removeHeader(HEADERS.wwwAuthenticate);
        replaceError(reply, body, 404, "NOT_FOUND");
      }
    });
  }),
  "no-allow-header": fault("routing.unknown", "405 answers carry no Allow header", (app) => {
    app.addHook("onSend", async (_req, reply, payload) => {
      reply.removeHeader("allow");
      return payload;
    });
  }),
  "empty-id-500": fault("routing.empty-id", "/agents/ with an empty id crashes (500)", (app) => {
    app.addHook("preHandler", async (req) => {
      if (endpointOf(req) && "agentId" in (req.params as Obj) && agentIdParam(req) === "") throw new Error("empty agent id");
    });
  }),
  "trailing-slash-bypass": fault("routing.variants", "POST /agents/ creates agents outside the Create bucket", (app, ctx) => {
    app.post("/v1/agents/", { config: {} }, async (req, reply) => {
      const body = parseJsonBody(req, reply, createAgentBodySchema);
      if (!body.ok) return reply;
      const created = ctx.store.create(req.principal.account.id, body.value as Parameters<Store["create"]>[1]);
      if (!created.ok) return sendError(reply, "INVALID_REQUEST", "The request has invalid fields", created.details);
      return reply.code(201).send({ success: true, data: created.agent });
    });
  }),

  /* §10 reference-compatible */
  "reply-not-deterministic": fault("reference.deterministic", "replies carry a random suffix", (app) => {
    rewriteJson(app, (body, req) => {
      if (endpointOf(req) === "sendMessage" && body.success === true && isObj(body.data))
        body.data.text = `${body.data.text} (${randomBytes(3).toString("hex")})`;
    });
  }),
  "mock-slow-single-delta": fault("reference.mock-models", "a streamed reply comes as one delta", (app) => {
    rewriteStream(app, () => {
      let joined = "";
      return (frame) => {
        const prefix = "event: delta\ndata: ";
        if (frame.startsWith(prefix)) {
          joined += String((JSON.parse(frame.slice(prefix.length)) as Obj).text);
          return null;
        }
        return frame.startsWith("event: done") ? `${prefix}${JSON.stringify({ text: joined })}\n\n${frame}` : frame;
      };
    });
  }),
};

export const FAULTS: Readonly<Record<string, Fault>> = DEFINED;

/** The fault names, sorted: what `--fault` accepts. */
export const FAULT_NAMES: readonly string[] = Object.keys(FAULTS).sort();

export function installFaults(app: FastifyInstance, ctx: ServerContext, names: readonly string[]): void {
  for (const name of names) {
    const fault = FAULTS[name];
    if (!fault) throw new Error(`unknown fault "${name}"; known: ${FAULT_NAMES.join(", ") || "(none)"}`);
    fault.install(app, ctx);
  }
}
