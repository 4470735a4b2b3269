import type { ListResult, Query, ServiceClient } from "../../src/client/index.js";
import { type Agent, LIST_LIMITS } from "../../src/contract/index.js";
import { expectOk, HarnessError } from "./harness.js";

/* PROFILE §5 List: reading a whole listing, for list.test.ts and list-isolation.test.ts. */

/** Walking a whole listing stops here: an account this large is a configuration problem, not a verdict. */
export const MAX_WALK_PAGES = 200;
export async function listPage(api: ServiceClient, query: Query): Promise<ListResult & { data: Agent[] }> {
  const res = await api.listAgents(query);
  expectOk(res);
  return res as ListResult & { data: Agent[] };
}

/** Every page of a listing at `limit`, in order; the items and the total of the first page. */
export async function walkAll(
  api: ServiceClient,
  query: Record<string, string | number> = {},
  limit: number = LIST_LIMITS.limit.max,
): Promise<{ items: Agent[]; total: number; pages: number }> {
  const items: Agent[] = [];
  let total = 0;
  for (let page = 1; page <= MAX_WALK_PAGES; page++) {
    const res = await listPage(api, { ...query, limit, page });
    if (page === 1) total = res.pagination!.total;
    items.push(...res.data);
    if (!res.pagination!.hasMore) return { items, total, pages: page };
  }
  throw new HarnessError(`the account holds more than ${MAX_WALK_PAGES * limit} agents: too many to walk`);
}

export const ids = (agents: readonly Agent[]) => agents.map((a) => a.id);
