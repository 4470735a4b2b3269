import { compareCodePoints } from "../../contract/index.js";
import { ALL, type FaultRecord, fault, reorderList, wrap, wrapUpdate } from "./tools.js";

/**
 * Faults that hide where random data rarely goes: values that collide, a status road the
 * generators seldom take, sort keys that tie, a fact broken only across the whole history of a
 * run. The property suites catch each with a shrunk case (small pools, every transition, bursts
 * of creates, invariants over the run); the functional suite, one clause at a time, passes each.
 */
export const RARE_PATH_FAULTS: FaultRecord = {
  /* only where values collide (two live agents of an account given one name) */
  "rename-to-taken-name-refused": fault(
    "update.merge-patch",
    "a rename to a name another live agent of the account holds is refused 400 (a create is not)",
    (_app, ctx) => {
      wrap(ctx.store, "update", (orig) => (accountId, id, patch) => {
        const name = patch.name;
        if (name === undefined || ctx.store.get(accountId, id)?.name === name) return orig(accountId, id, patch);
        const taken = ctx.store
          .list(accountId, { page: 1, limit: ALL, sortBy: "createdAt", order: "asc" })
          .data.some((a) => a.id !== id && a.name === name);
        return taken ? { ok: false, details: [{ field: "name", issue: "is already taken" }] } : orig(accountId, id, patch);
      });
    },
  ),

  /* only on a road the generators seldom take (into error, then a patch without status) */
  "model-change-clears-error": fault(
    "update.merge-patch",
    "a patch changing modelSettings of an agent in error, without status, also sets it active",
    (_app, ctx) => {
      wrapUpdate(ctx.store, ({ patch, before }, update) =>
        update(
          before?.status === "error" && patch.modelSettings && patch.status === undefined
            ? { ...patch, status: "active" }
            : patch,
        ),
      );
    },
  ),

  /* only where sort keys tie (agents created in the same millisecond) */
  "created-at-ties-by-id-ascending": fault(
    "list.order",
    "sorting by createdAt breaks ties by id ascending whatever the order (desc included)",
    (_app, ctx) => {
      reorderList(
        ctx.store,
        (q) => q.sortBy === "createdAt",
        (q) => (x, y) =>
          (q.order === "asc" ? 1 : -1) * (Date.parse(x.createdAt) - Date.parse(y.createdAt)) || compareCodePoints(x.id, y.id),
      );
    },
  ),

  /* only over the whole history (a conversation id comes back for another agent) */
  "conversation-ids-recycled": fault(
    "message.conversation",
    "a deleted agent's conversation ids go to new conversations, oldest first, once 8 wait in a pool",
    (_app, ctx) => {
      const pools = new Map<string, string[]>();
      const handed = new Map<string, string[]>();
      const seen = new WeakSet<object>();
      const key = (accountId: string, id: string) => JSON.stringify([accountId, id]);
      wrap(ctx.store, "conversation", (orig) => (accountId, agentId, userId, roomId) => {
        const conv = orig(accountId, agentId, userId, roomId);
        if (seen.has(conv)) return conv;
        seen.add(conv);
        const pool = pools.get(accountId) ?? [];
        if (pool.length >= 8) conv.id = pool.shift() ?? conv.id;
        handed.set(key(accountId, agentId), [...(handed.get(key(accountId, agentId)) ?? []), conv.id]);
        return conv;
      });
      wrap(ctx.store, "delete", (orig) => (accountId, id) => {
        const gone = orig(accountId, id);
        if (gone) {
          pools.set(accountId, [...(pools.get(accountId) ?? []), ...(handed.get(key(accountId, id)) ?? [])]);
          handed.delete(key(accountId, id));
        }
        return gone;
      });
    },
  ),
};
