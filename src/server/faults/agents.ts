import {
  compareCodePoints,
  isRecord,
  MERGE_PATCH_CONTENT_TYPE,
  PLATFORMS,
  paginationFor,
  updateAgentBodySchema,
} from "../../contract/index.js";
import { agentIdParam, sendError } from "../http.js";
import {
  ALL,
  accountOf,
  afterUpdate,
  endpointOf,
  errorCode,
  type FaultRecord,
  fault,
  jsonBody,
  NESTED_KEYS,
  type Obj,
  replaceError,
  rewriteBody,
  rewriteJson,
  touched,
  trackAccounts,
  withoutNulls,
  wrap,
} from "./tools.js";

/** Injected faults of PROFILE §5 Create, List, Get, Update, Delete. */
export const AGENTS_FAULTS: FaultRecord = {
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
        if (isRecord(body.platforms))
          for (const p of PLATFORMS) {
            const platform = body.platforms[p];
            if (isRecord(platform) && !("enabled" in platform)) platform.enabled = false;
          }
      });
    },
  ),

  /* §5 list */
  "limit-clamped": fault("list.invalid-params", "limit above 100 is clamped to 100 instead of rejected", (app) => {
    app.addHook("preHandler", async (req) => {
      const q = isRecord(req.query) ? req.query : {};
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
        if (isRecord(value)) replaced[key] = { ...Object.fromEntries(subKeys.map((k) => [k, null])), ...value };
      }
      return orig(accountId, id, updateAgentBodySchema.parse(replaced));
    });
  }),
  "null-ignored": fault("update.merge-patch", "null in a patch is ignored instead of resetting the field", (_app, ctx) => {
    wrap(
      ctx.store,
      "update",
      (orig) => (accountId, id, patch) => orig(accountId, id, updateAgentBodySchema.parse(withoutNulls(patch))),
    );
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
        if (partial.success && Object.keys(valid).length) ctx.store.update(account, agentIdParam(req), partial.data);
      });
    },
  ),
  "noop-bumps-updated-at": fault("update.noop", "PATCH {} moves updatedAt", (_app, ctx) => {
    afterUpdate(ctx.store, ({ accountId, id, before }, r) =>
      r?.ok && r.agent.updatedAt === before?.updatedAt ? touched(ctx.store, accountId, id, r.agent) : r,
    );
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
  }),
  "delete-without-permission": fault("delete.forbidden", "any key may delete (agents:delete is not checked)", (_app, ctx) => {
    wrap(ctx.keyRing, "lookup", (orig) => (presented) => {
      const p = orig(presented);
      return p && { ...p, permissions: new Set([...p.permissions, "agents:delete" as const]) };
    });
  }),
  "delete-account-unguarded": fault(
    "agent.not-found",
    "a DELETE from an account that has never had an agent answers 500 (an unguarded lookup)",
    (_app, ctx) => {
      const accounts = trackAccounts(ctx.store);
      wrap(ctx.store, "delete", (orig) => (accountId, id) => {
        if (!accounts.has(accountId)) throw new TypeError("Cannot read properties of undefined (reading 'delete')");
        return orig(accountId, id);
      });
    },
  ),
  "delete-without-deleted-flag": fault("delete.ok", "DELETE answers data {id} without deleted: true", (app) => {
    rewriteJson(app, (body, req, reply) => {
      if (endpointOf(req) === "deleteAgent" && reply.statusCode === 200 && isRecord(body.data)) delete body.data.deleted;
    });
  }),
};
