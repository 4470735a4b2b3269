import { type ListResult, type Query, queryString, type ServiceClient } from "../../src/client/index.js";
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

/** Times a read of several pages starts again while another client's activity moves the account under it. */
const STILL_TRIES = 3;

/**
 * A read of several list pages (`read`, through the lister it is handed), kept only if the account
 * held still while it ran. Another client creating or deleting agents between two pages shifts the
 * pages under a walk (an agent shown twice, another skipped), which proves nothing of the service:
 * every page of one filter must answer the same total, and the account's total read just before
 * and just after must be the same too (a create and a delete between the same two pages would
 * balance out, but a neighbour doing both between two reads tens of milliseconds apart is not
 * what this guards against). Read again up to STILL_TRIES times; then inconclusive, naming the
 * totals seen. Judge what the pages show only once this returns.
 */
export async function whileStill<T>(api: ServiceClient, read: (list: Lister) => Promise<T>): Promise<T> {
  const moved: string[] = [];
  for (let i = 0; i < STILL_TRIES; i++) {
    const totals = new Map<string, Set<number>>();
    // by filter: the pages of one query, whatever their page and limit, count the same agents
    const note = (query: Query, total: number | undefined) => {
      const params = new URLSearchParams(queryString(query));
      params.delete("page");
      params.delete("limit");
      params.sort();
      const key = params.toString();
      totals.set(key, (totals.get(key) ?? new Set()).add(total ?? Number.NaN));
    };
    const account = async () => note({}, (await listPage(api, { limit: 1 })).pagination?.total);
    await account();
    const result = await read(async (query) => {
      const res = await listPage(api, query);
      note(query, res.pagination?.total);
      return res;
    });
    await account();
    const moving = [...totals].filter(([, seen]) => seen.size > 1);
    if (moving.length === 0) return result;
    moved.push(moving.map(([filter, seen]) => `${filter === "" ? "" : `?${filter} `}${[...seen].join(" → ")}`).join(", "));
  }
  throw new Inconclusive(
    `another client's activity in the account moved its total while the pages were read, ${STILL_TRIES} times (totals: ${moved.join("; ")})`,
  );
}
