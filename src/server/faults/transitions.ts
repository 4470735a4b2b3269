import type { FastifyRequest } from "fastify";
import { type Agent, compareCodePoints, paginationFor } from "../../contract/index.js";
import { newId } from "../store.js";
import { ALL, accountOf, afterUpdate, endpointOf, type FaultRecord, fault, touched, wrap } from "./tools.js";

/**
 * Defects on the roads out of `error` and out of `inactive`: each shows only after an agent took
 * one of those transitions, in an answer that depends on what came before (a conversation it
 * held, a list by its new status, a read after it, the same patch twice). Production rarely takes
 * these roads, so nobody sees them; the stateful suite drives every allowed pair and the
 * operations after each, and must catch each one.
 */

type Store = Parameters<FaultRecord[string]["install"]>[1]["store"];
type Conversation = ReturnType<Store["conversation"]>;

/** Call `changed` after each update that moves an agent from one status to another. */
function onStatusChange(store: Store, changed: (accountId: string, id: string, from: string, to: string) => void): void {
  wrap(store, "update", (orig) => (accountId, id, patch) => {
    const from = store.get(accountId, id)?.status;
    const r = orig(accountId, id, patch);
    if (r?.ok && from !== undefined && r.agent.status !== from) changed(accountId, id, from, r.agent.status);
    return r;
  });
}

/** Once an agent goes from `from` back to active, `touch` each keyed conversation it held (the store keeps them private). */
function onReactivation(store: Store, from: string, touch: (conv: Conversation) => void): void {
  const byAgent = new Map<string, Set<Conversation>>();
  wrap(store, "conversation", (orig) => (accountId, agentId, userId, roomId) => {
    const conv = orig(accountId, agentId, userId, roomId);
    if (userId !== undefined || roomId !== undefined) byAgent.set(agentId, (byAgent.get(agentId) ?? new Set()).add(conv));
    return conv;
  });
  onStatusChange(store, (_accountId, id, was, now) => {
    if (was === from && now === "active") for (const conv of byAgent.get(id) ?? []) touch(conv);
  });
}

type ListQuery = Parameters<Store["list"]>[1];
/** PROFILE §5 List's order, over records: sortBy in order, ties by id in the same direction. */
const listOrder = (q: ListQuery) => (x: Agent, y: Agent) =>
  (q.order === "asc" ? 1 : -1) *
  ((q.sortBy === "createdAt"
    ? Date.parse(x.createdAt) - Date.parse(y.createdAt)
    : compareCodePoints(String(x[q.sortBy]), String(y[q.sortBy]))) || compareCodePoints(x.id, y.id));

/** Lists of `status` answer as if `extra` agents of the account were there too and `hidden` were not. */
function listAsIf(
  store: Store,
  status: string,
  extra: (accountId: string) => readonly Agent[],
  hidden: (accountId: string, agent: Agent) => boolean = () => false,
): void {
  wrap(store, "list", (orig) => (accountId, q) => {
    if (q.status !== status) return orig(accountId, q);
    const all = [
      ...orig(accountId, { ...q, page: 1, limit: ALL }).data.filter((a) => !hidden(accountId, a)),
      ...extra(accountId),
    ];
    all.sort(listOrder(q));
    const start = (q.page - 1) * q.limit;
    return { data: all.slice(start, start + q.limit), pagination: paginationFor(q.page, q.limit, all.length) };
  });
}

const agentIdOf = (req: FastifyRequest): string | undefined => {
  const params = req.params;
  return typeof params === "object" && params !== null && "agentId" in params && typeof params.agentId === "string"
    ? params.agentId
    : undefined;
};

export const TRANSITION_FAULTS: FaultRecord = {
  /* out of error */
  "error-reactivation-new-conversations": fault(
    "message.conversation",
    "an agent brought back from error to active opens new conversations for the users it had",
    (_app, ctx) =>
      onReactivation(ctx.store, "error", (conv) => {
        conv.id = newId("conv");
      }),
  ),
  "error-to-inactive-listed-as-error": fault(
    "list.filter",
    "an agent moved from error to inactive is still listed under status=error, not inactive",
    (_app, ctx) => {
      const marked = new Map<string, Set<string>>();
      const isMarked = (accountId: string, agent: Agent) => agent.status === "inactive" && !!marked.get(accountId)?.has(agent.id);
      onStatusChange(ctx.store, (accountId, id, from, to) => {
        const ids = marked.get(accountId) ?? new Set<string>();
        if (from === "error" && to === "inactive") marked.set(accountId, ids.add(id));
        else ids.delete(id);
      });
      // the store's own list, before the hiding below wraps it
      const list = ctx.store.list.bind(ctx.store);
      const inactiveOnes = (accountId: string) =>
        list(accountId, { page: 1, limit: ALL, status: "inactive", sortBy: "createdAt", order: "asc" }).data.filter((a) =>
          isMarked(accountId, a),
        );
      listAsIf(ctx.store, "error", inactiveOnes);
      listAsIf(ctx.store, "inactive", () => [], isMarked);
    },
  ),
  "error-patch-stores-active": fault(
    "status.lifecycle",
    "a patch without status to an agent in error answers error but stores the agent active",
    (_app, ctx) => {
      afterUpdate(ctx.store, ({ accountId, id, patch, before }, r) => {
        if (before?.status === "error" && r?.ok && patch.status === undefined) ctx.store.setStatus(accountId, id, "active");
        return r;
      });
    },
  ),
  "error-delete-still-readable": fault(
    "delete.gone",
    "an agent deleted while in error still answers GET with its record (lists forget it)",
    (app, ctx) => {
      const ghosts = new Map<string, Agent>();
      const key = (accountId: string, id: string) => JSON.stringify([accountId, id]);
      wrap(ctx.store, "delete", (orig) => (accountId, id) => {
        const agent = ctx.store.get(accountId, id);
        const gone = orig(accountId, id);
        if (gone && agent?.status === "error") ghosts.set(key(accountId, id), agent);
        return gone;
      });
      app.addHook("preHandler", async (req, reply) => {
        const accountId = accountOf(req);
        const id = agentIdOf(req);
        const ghost = accountId && id && endpointOf(req) === "getAgent" ? ghosts.get(key(accountId, id)) : undefined;
        if (ghost) return reply.code(200).send({ success: true, data: ghost });
      });
    },
  ),

  /* out of inactive */
  "reactivation-restarts-turns": fault(
    "status.lifecycle",
    "an agent brought back from inactive to active counts its conversations' turns from 1 again",
    (_app, ctx) =>
      onReactivation(ctx.store, "inactive", (conv) => {
        conv.turns = 0;
      }),
  ),
  "inactive-repatch-moves-updated-at": fault(
    "update.noop",
    "a patch without status that changes nothing on an inactive agent still moves updatedAt",
    (_app, ctx) => {
      afterUpdate(ctx.store, ({ accountId, id, patch, before }, r) => {
        const unchanged = r?.ok && before?.status === "inactive" && r.agent.updatedAt === before.updatedAt;
        // a patch with something in it and no status: PATCH {} is another fault's road
        const touches = unchanged && patch.status === undefined && Object.keys(patch).length > 0;
        return touches ? touched(ctx.store, accountId, id, r.agent) : r;
      });
    },
  ),
  "inactive-delete-stays-listed": fault(
    "delete.gone",
    "an agent deleted while inactive stays in lists filtered by status=inactive",
    (_app, ctx) => {
      const ghosts = new Map<string, Agent[]>();
      wrap(ctx.store, "delete", (orig) => (accountId, id) => {
        const agent = ctx.store.get(accountId, id);
        const gone = orig(accountId, id);
        if (gone && agent?.status === "inactive") ghosts.set(accountId, [...(ghosts.get(accountId) ?? []), agent]);
        return gone;
      });
      listAsIf(ctx.store, "inactive", (accountId) => ghosts.get(accountId) ?? []);
    },
  ),
};
