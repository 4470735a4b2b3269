import { type Agent, compareCodePoints, isRecord, paginationFor } from "../../contract/index.js";
import { afterUpdate, type FaultRecord, fault, type Obj, onCreated, reorderList, rewriteWrites, touched, wrap } from "./tools.js";

/**
 * Subtle faults the functional suites do not catch: each shows only for some
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
      rewriteWrites(ctx.store, normalise);
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
      afterUpdate(ctx.store, ({ accountId, id, patch, before }, r) =>
        r?.ok && patch.status !== undefined && r.agent.updatedAt === before?.updatedAt
          ? touched(ctx.store, accountId, id, r.agent)
          : r,
      );
    },
  ),

  "temperature-two-decimals": fault(
    "create.created",
    "temperature is stored rounded to two decimals (0.123 reads back as 0.12)",
    (_app, ctx) => {
      const round = <T extends Obj>(body: T): T => {
        const settings = body.modelSettings;
        if (!isRecord(settings) || typeof settings.temperature !== "number") return body;
        return { ...body, modelSettings: { ...settings, temperature: Math.round(settings.temperature * 100) / 100 } };
      };
      rewriteWrites(ctx.store, round);
    },
  ),

  /* only after a history of calls */
  "knowledge-bases-appended": fault(
    "update.merge-patch",
    "a patched knowledgeBases list is appended to a non-empty stored one instead of replacing it",
    (_app, ctx) => {
      wrap(ctx.store, "update", (orig) => (accountId, id, patch) => {
        const stored = ctx.store.get(accountId, id)?.knowledge.knowledgeBases ?? [];
        const sent = isRecord(patch.knowledge) ? patch.knowledge.knowledgeBases : undefined;
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
      onCreated(ctx.store, (agent) => firstName.set(agent.id, agent.name));
      const key = (a: Agent) => firstName.get(a.id) ?? a.name;
      reorderList(
        ctx.store,
        (q) => q.sortBy === "name",
        (q) => (x, y) => (q.order === "asc" ? 1 : -1) * (compareCodePoints(key(x), key(y)) || compareCodePoints(x.id, y.id)),
      );
    },
  ),

  /* only in one order of operations */
  "list-total-stale-after-delete": fault(
    "delete.gone",
    "after a delete, list totals still count the deleted agent until the account's next create",
    (_app, ctx) => {
      const stale = new Map<string, number>();
      onCreated(ctx.store, (_agent, accountId) => stale.delete(accountId));
      wrap(ctx.store, "delete", (orig) => (accountId, id) => {
        const gone = orig(accountId, id);
        if (gone) stale.set(accountId, (stale.get(accountId) ?? 0) + 1);
        return gone;
      });
      wrap(ctx.store, "list", (orig) => (accountId, q) => {
        const r = orig(accountId, q);
        const extra = stale.get(accountId) ?? 0;
        return extra ? { ...r, pagination: paginationFor(q.page, q.limit, r.pagination.total + extra) } : r;
      });
    },
  ),
};
