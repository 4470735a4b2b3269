import { type Agent, compareCodePoints, paginationFor } from "../../contract/index.js";
import { ALL, type FaultRecord, fault, isObj, type Obj, wrap } from "./tools.js";

/**
 * Subtle faults the functional suites do not catch (issue 8 §6): each shows only for some
 * inputs, only after a history of calls, or only in one order of operations — the defects a
 * careful implementer could still ship. The property suites must catch each with a shrunk case.
 */
export const PROPERTY_FAULTS: FaultRecord = {
  /* only for some inputs */
  "name-nfc-normalized": fault(
    "create.created",
    "a name is stored NFC-normalised (e + U+0301 reads back as é): not as sent",
    (_app, ctx) => {
      const normalise = <T extends Obj>(body: T): T =>
        typeof body.name === "string" ? { ...body, name: body.name.normalize("NFC") } : body;
      wrap(ctx.store, "create", (orig) => (accountId, body) => orig(accountId, normalise(body)));
      wrap(ctx.store, "update", (orig) => (accountId, id, patch) => orig(accountId, id, normalise(patch)));
    },
  ),
  "list-filter-after-page": fault(
    "list.filter",
    "with status and sortBy=name together, the status filter is applied after the page is cut",
    (_app, ctx) => {
      wrap(ctx.store, "list", (orig) => (accountId, q) => {
        if (q.status === undefined || q.sortBy !== "name") return orig(accountId, q);
        const unfiltered = orig(accountId, { ...q, status: undefined });
        return { data: unfiltered.data.filter((a) => a.status === q.status), pagination: orig(accountId, q).pagination };
      });
    },
  ),
  "same-status-bumps-updated-at": fault(
    "update.noop",
    "a patch setting status to the value it already has moves updatedAt",
    (_app, ctx) => {
      wrap(ctx.store, "update", (orig) => (accountId, id, patch) => {
        const before = ctx.store.get(accountId, id);
        const r = orig(accountId, id, patch);
        if (!r?.ok || patch.status === undefined || r.agent.updatedAt !== before?.updatedAt) return r;
        const status = r.agent.status;
        ctx.store.setStatus(accountId, id, status === "active" ? "inactive" : "active");
        ctx.store.setStatus(accountId, id, status);
        return { ...r, agent: ctx.store.get(accountId, id) ?? r.agent };
      });
    },
  ),

  /* only after a history of calls */
  "knowledge-bases-appended": fault(
    "update.merge-patch",
    "a patched knowledgeBases list is appended to a non-empty stored one instead of replacing it",
    (_app, ctx) => {
      wrap(ctx.store, "update", (orig) => (accountId, id, patch) => {
        const stored = ctx.store.get(accountId, id)?.knowledge.knowledgeBases ?? [];
        const sent = isObj(patch.knowledge) ? patch.knowledge.knowledgeBases : undefined;
        if (!Array.isArray(sent) || stored.length === 0) return orig(accountId, id, patch);
        const merged = [...new Set([...stored, ...sent])];
        return orig(accountId, id, { ...patch, knowledge: { ...patch.knowledge, knowledgeBases: merged } });
      });
    },
  ),
  "rename-keeps-sort-key": fault(
    "list.order",
    "sorting by name uses the name an agent was created with, not its current one",
    (_app, ctx) => {
      const firstName = new Map<string, string>();
      wrap(ctx.store, "create", (orig) => (accountId, body) => {
        const r = orig(accountId, body);
        if (r.ok) firstName.set(r.agent.id, r.agent.name);
        return r;
      });
      wrap(ctx.store, "list", (orig) => (accountId, q) => {
        if (q.sortBy !== "name") return orig(accountId, q);
        const all = orig(accountId, { ...q, page: 1, limit: ALL }).data;
        const key = (a: Agent) => firstName.get(a.id) ?? a.name;
        const dir = q.order === "asc" ? 1 : -1;
        all.sort((x, y) => dir * (compareCodePoints(key(x), key(y)) || compareCodePoints(x.id, y.id)));
        const start = (q.page - 1) * q.limit;
        return { data: all.slice(start, start + q.limit), pagination: paginationFor(q.page, q.limit, all.length) };
      });
    },
  ),

  /* only in one order of operations */
  "reactivation-resets-conversations": fault(
    "status.lifecycle",
    "inactive → active forgets the agent's conversations (turn restarts at 1)",
    (_app, ctx) => {
      const epoch = new Map<string, number>();
      wrap(ctx.store, "update", (orig) => (accountId, id, patch) => {
        const before = ctx.store.get(accountId, id)?.status;
        const r = orig(accountId, id, patch);
        if (r?.ok && before === "inactive" && r.agent.status === "active") epoch.set(id, (epoch.get(id) ?? 0) + 1);
        return r;
      });
      // a new epoch keys every conversation of the agent afresh
      wrap(ctx.store, "conversation", (orig) => (accountId, agentId, userId, roomId) => {
        const n = epoch.get(agentId);
        if (n === undefined || (userId === undefined && roomId === undefined)) return orig(accountId, agentId, userId, roomId);
        return orig(accountId, agentId, `${userId ?? ""}\u0000${n}`, roomId);
      });
    },
  ),
};
