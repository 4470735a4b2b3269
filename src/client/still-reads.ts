import { type Query, queryString } from "./client.js";

/**
 * Reads of several list pages that prove something only if the account held still while they
 * ran. Another client creating or deleting agents between two pages shifts the pages under a walk
 * (an agent shown twice, another skipped), which proves nothing of the service; so does the
 * account changing between two reads compared with each other.
 */

/** A list read that tells the total it answered with: what stillness is judged on. */
export type TotalLister<P extends { pagination?: { total: number } }> = (query: Query) => Promise<P>;

/** What reading while still came to: the reads' result, or the totals that moved under every try. */
export type StillRead<T> = { still: true; value: T } | { still: false; moved: string[] };

/** Times a read starts again while the account moves under it. */
export const STILL_TRIES = 3;

/**
 * `read`, through the lister it is handed, kept only when every page of one filter answered the
 * same total and the account's whole total, read just before and just after, did not move either
 * (a create and a delete between the same two pages balance out; a neighbour doing both between
 * two reads tens of milliseconds apart is not what this guards against). Tried up to `tries` times.
 */
export async function readWhileStill<P extends { pagination?: { total: number } }, T>(
  list: TotalLister<P>,
  read: (list: TotalLister<P>) => Promise<T>,
  tries = STILL_TRIES,
): Promise<StillRead<T>> {
  const moved: string[] = [];
  for (let i = 0; i < tries; i++) {
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
    const account = async () => note({}, (await list({ limit: 1 })).pagination?.total);
    await account();
    const value = await read(async (query) => {
      const res = await list(query);
      note(query, res.pagination?.total);
      return res;
    });
    await account();
    const moving = [...totals].filter(([, seen]) => seen.size > 1);
    if (moving.length === 0) return { still: true, value };
    moved.push(moving.map(([filter, seen]) => `${filter === "" ? "" : `?${filter} `}${[...seen].join(" → ")}`).join(", "));
  }
  return { still: false, moved };
}
