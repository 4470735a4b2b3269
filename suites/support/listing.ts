import { type ListResult, type Query, readWhileStill, type ServiceClient } from "../../src/client/index.js";
import { type Agent, LIST_LIMITS } from "../../src/contract/index.js";
import { expectOk, HarnessError, Inconclusive } from "./harness.js";

/* PROFILE §5 List: reading a whole listing, for list.test.ts and list-isolation.test.ts. */

/** Walking a whole listing stops here: an account this large is a configuration problem, not a verdict. */
export const MAX_WALK_PAGES = 200;
export async function listPage(api: ServiceClient, query: Query): Promise<ListResult & { data: Agent[] }> {
  const res = await api.listAgents(query);
  expectOk(res);
  return res as ListResult & { data: Agent[] };
}

/** One page of a listing, as listPage reads it (whileStill hands out one that also notes its total). */
export type ListPage = Awaited<ReturnType<typeof listPage>>;
export type Lister = (query: Query) => Promise<ListPage>;

/** Every page of a listing at `limit`, in order; the items and the total of the first page. */
export async function walkAll(
  api: ServiceClient,
  query: Record<string, string | number> = {},
  limit: number = LIST_LIMITS.limit.max,
  list: Lister = (q) => listPage(api, q),
): Promise<{ items: Agent[]; total: number; pages: number }> {
  const items: Agent[] = [];
  let total = 0;
  for (let page = 1; page <= MAX_WALK_PAGES; page++) {
    const res = await list({ ...query, limit, page });
    if (page === 1) total = res.pagination!.total;
    items.push(...res.data);
    if (!res.pagination!.hasMore) return { items, total, pages: page };
  }
  throw new HarnessError(`the account holds more than ${MAX_WALK_PAGES * limit} agents: too many to walk`);
}

export const ids = (agents: readonly Agent[]) => agents.map((a) => a.id);

/**
 * A read of several list pages (`read`, through the lister it is handed), judged only once the
 * account held still while it ran (src/client/still-reads.ts): read again up to STILL_TRIES times,
 * then inconclusive, naming the totals seen. Judge what the pages show only once this returns.
 */
export async function whileStill<T>(api: ServiceClient, read: (list: Lister) => Promise<T>): Promise<T> {
  const outcome = await readWhileStill((query) => listPage(api, query), read);
  if (outcome.still) return outcome.value;
  throw new Inconclusive(
    `another client's activity in the account moved its total while the pages were read, ${outcome.moved.length} times (totals: ${outcome.moved.join("; ")})`,
  );
}
