import { describe } from "vitest";
import { type ServiceClient, STILL_TRIES } from "../../src/client/index.js";
import { type Agent, compareCodePoints, LIST_LIMITS } from "../../src/contract/index.js";
import { declareFile } from "../support/declare-file.js";
import { loadBoundaries } from "../support/fixtures.js";
import { check, expect, expectError, expectOk, Inconclusive, smoke } from "../support/harness.js";
import { ids, type ListPage, listPage, MAX_WALK_PAGES, walkAll, whileStill } from "../support/listing.js";

declareFile({});

/* PROFILE §5 List. The account may hold agents of other tests or runs: every check reasons about
   the agents it made (named with the run prefix) and about invariants that hold for any content. */

type SortBy = "createdAt" | "name" | "status";
type Order = "asc" | "desc";

const queryRows = loadBoundaries<{
  rows: Array<{ query: string; status: 200; page: number; limit: number } | { query: string; status: 400; field: string }>;
}>("list-query.json").rows;

/** A walk at limit 1..3 covers the whole listing up to this many agents, else the prefix holding ours. */
const FULL_WALK_MAX_TOTAL = 15;

/** PROFILE §5 order: by sortBy in order, ties by id in the same direction; createdAt compares as time. */
function listOrder(sortBy: SortBy, order: Order): (a: Agent, b: Agent) => number {
  const dir = order === "asc" ? 1 : -1;
  const primary = (a: Agent, b: Agent) =>
    sortBy === "createdAt" ? Date.parse(a.createdAt) - Date.parse(b.createdAt) : compareCodePoints(a[sortBy], b[sortBy]);
  return (a, b) => dir * (Math.sign(primary(a, b)) || Math.sign(compareCodePoints(a.id, b.id)));
}

/**
 * How much of a listing a walk covers: a small account whole; a large one up to the item holding
 * the last of `made` (newest first, so the walk stays short).
 */
function walkedPrefix(listed: readonly Agent[], made: readonly Agent[]): number {
  if (listed.length <= FULL_WALK_MAX_TOTAL) return listed.length;
  const at = ids(listed);
  return Math.max(...made.map((a) => at.indexOf(a.id))) + 1;
}

/**
 * A page past the end, held to PROFILE §5 "200 with data [] and the real total": its total must be
 * one the account had while it was asked, the first page's total read just before or just after it.
 * Another client creating and deleting agents moves the total between two lists (and may bring a
 * page back in range), so the page is chosen from the total read just before it (`pageFor`), and an
 * answer that agrees with neither reading is asked again, up to STILL_TRIES times. Only one that
 * disagrees every time, with the account standing still around it at least once, is judged against
 * that total; one whose account never stood still is inconclusive.
 */
async function expectPastEnd(api: ServiceClient, limit: number, pageFor: (total: number) => number): Promise<void> {
  const tries: { before: number; after: number; page: number; res: ListPage }[] = [];
  for (let i = 0; i < STILL_TRIES; i++) {
    const before = (await listPage(api, { limit: 1 })).pagination!.total;
    const page = pageFor(before);
    const res = await listPage(api, { limit, page });
    const after = (await listPage(api, { limit: 1 })).pagination!.total;
    const own = res.pagination?.total;
    if (typeof own === "number" && (own === before || own === after) && page > Math.ceil(Math.max(before, after) / limit)) {
      expect(res.data, `limit=${limit}&page=${page}: data`).toEqual([]);
      expectPagination(res, page, limit, `limit=${limit}&page=${page}`);
      return;
    }
    tries.push({ before, after, page, res });
  }
  const still = tries.find((t) => t.before === t.after);
  if (!still)
    throw new Inconclusive(
      `limit=${limit}: another client's activity in the account moved the total while a page past the end was asked, ${STILL_TRIES} times (${tries.map((t) => `${t.before} → ${t.after}`).join(", ")})`,
    );
  // past the end of the total the account held still at, by the choice of its page
  const { before: total, page, res } = still;
  const label = `limit=${limit}&page=${page}`;
  const expected = { page, limit, total, totalPages: Math.ceil(total / limit), hasMore: false };
  expect(res.pagination, `${label}: pagination (the total read just before and just after it: ${total})`).toEqual(expected);
  expect(res.data, `${label}: data`).toEqual([]);
}

/**
 * One list answer against PROFILE §2's pagination on the total it answers with: another client
 * creating or deleting agents between two lists moves the total, never the rule (each answer is
 * one reading of the account), so no answer is held to another's total.
 */
function expectPagination(res: ListPage, page: number, limit: number, label: string): void {
  const total = res.pagination?.total ?? Number.NaN;
  const totalPages = Math.ceil(total / limit);
  expect(res.pagination, label).toEqual({ page, limit, total, totalPages, hasMore: page < totalPages });
  expect(res.data.length, `${label}: items`).toBe(Math.max(0, Math.min(limit, total - (page - 1) * limit)));
}

/** Adjacent pairs out of order (at most a few, for the message). */
function outOfOrder(items: Agent[], sortBy: SortBy, order: Order): string[] {
  const cmp = listOrder(sortBy, order);
  const bad: string[] = [];
  for (let i = 1; i < items.length && bad.length < 5; i++) {
    const [a, b] = [items[i - 1]!, items[i]!];
    if (cmp(a, b) >= 0)
      bad.push(`#${i - 1} {${a.id}, ${JSON.stringify(a[sortBy])}} before #${i} {${b.id}, ${JSON.stringify(b[sortBy])}}`);
  }
  return bad;
}

describe("GET /agents", () => {
  smoke("list.params", "the defaults are page 1, limit 20, createdAt desc", async ({ api, agents }) => {
    const older = await agents.create();
    const newer = await agents.create();
    // the two reads in one stretch the account held still for: another client's create between them
    // moves the first page, which proves nothing of the defaults
    const [implicit, explicit] = await whileStill(
      api,
      async (list) => [await list({}), await list({ page: 1, limit: 20, sortBy: "createdAt", order: "desc" })] as const,
    );
    expect(implicit.pagination, "pagination of GET /agents").toMatchObject({ page: 1, limit: 20 });
    expect(implicit.data.length).toBeLessThanOrEqual(20);
    expect(ids(implicit.data), "same items as page=1&limit=20&sortBy=createdAt&order=desc").toEqual(ids(explicit.data));
    expect(outOfOrder(implicit.data, "createdAt", "desc"), "pairs out of createdAt desc order").toEqual([]);
    // newer first, unless both were made in the same millisecond: then by id, descending
    const mine = ids(implicit.data).filter((id) => id === older.id || id === newer.id);
    expect(mine, "our two agents, newest first").toEqual(ids([older, newer].sort(listOrder("createdAt", "desc"))));
  });

  describe("query parameters (fixtures/boundaries/list-query.json)", () => {
    for (const row of queryRows) {
      if (row.status === 200)
        check(
          ["list.params", "list.invalid-params"],
          `?${row.query} → 200 page ${row.page}, limit ${row.limit}`,
          async ({ api }) => {
            const res = await listPage(api, row.query);
            expect(res.pagination).toMatchObject({ page: row.page, limit: row.limit });
          },
        );
      else
        check("list.invalid-params", `?${row.query} → 400 INVALID_REQUEST naming ${row.field}`, async ({ api }) => {
          expectError(await api.listAgents(row.query), "INVALID_REQUEST", row.field);
        });
    }
  });

  check("list.filter", "status filters the list to that status", async ({ api, agents }) => {
    const active = await agents.create({ status: "active" });
    const inactive = await agents.create({ status: "inactive" });
    for (const status of ["active", "inactive", "error"] as const) {
      // one stretch the account held still for: another client's creates and deletes move the total under a walk
      const { items, total } = await whileStill(api, (list) => walkAll(api, { status }, LIST_LIMITS.limit.max, list));
      expect(
        items.filter((a) => a.status !== status).map((a) => `${a.id}: ${a.status}`),
        `?status=${status}: items of another status`,
      ).toEqual([]);
      expect(items.length, `?status=${status}: items walked = total`).toBe(total);
      expect(ids(items).includes(active.id), `?status=${status} lists the active agent`).toBe(status === "active");
      expect(ids(items).includes(inactive.id), `?status=${status} lists the inactive agent`).toBe(status === "inactive");
    }
  });

  check(
    "list.order",
    "every sortBy × order, ties broken by id in the same direction, strings by code point",
    async ({ api, agents }) => {
      // Names share a stem; U+FF01 comes before U+1F600 by code point but after it by UTF-16 unit
      // (0xFF01 > 0xD83D). Two names tie, and the statuses tie in pairs.
      const stem = agents.name("-");
      const fullwidth = `${stem}\uFF01`;
      const emoji = `${stem}\u{1F600}`;
      const made = [
        await agents.create({ name: emoji, status: "active" }),
        await agents.create({ name: fullwidth, status: "inactive" }),
        await agents.create({ name: fullwidth, status: "active" }),
        await agents.create({ name: `${stem}A`, status: "inactive" }),
      ];
      const mineIds = new Set(ids(made));
      for (const sortBy of ["createdAt", "name", "status"] as const)
        for (const order of ["asc", "desc"] as const) {
          // a walk the account held still for: a create between two pages repeats an item across them
          const { items } = await whileStill(api, (list) => walkAll(api, { sortBy, order }, LIST_LIMITS.limit.max, list));
          const label = `?sortBy=${sortBy}&order=${order}`;
          expect(outOfOrder(items, sortBy, order), `${label}: pairs out of order`).toEqual([]);
          const mine = items.filter((a) => mineIds.has(a.id));
          expect(ids(mine), `${label}: our agents, in order`).toEqual(ids([...made].sort(listOrder(sortBy, order))));
          if (sortBy === "name") {
            const position = (name: string) => mine.findIndex((a) => a.name === name);
            const fullwidthFirst = position(fullwidth) < position(emoji);
            expect(fullwidthFirst, `${label}: U+FF01 sorts before U+1F600 by code point`).toBe(order === "asc");
          }
        }
    },
  );

  check(
    "list.walk",
    "walking every page at limit 1, 2 and 3 yields every agent once; items have the Get shape",
    async ({ api, agents }) => {
      const made = [await agents.create(), await agents.create(), await agents.create()];
      let reference: Agent[] = [];
      for (const limit of [1, 2, 3]) {
        // the listing at limit 100 and the walk at `limit` in one stretch the account held still for:
        // another client's creates and deletes shift the pages under a walk, and between two reads
        // change what either holds, which proves nothing of the service
        const [listed, walked] = await whileStill(api, async (list) => {
          const all = (await walkAll(api, {}, LIST_LIMITS.limit.max, list)).items;
          const prefix = walkedPrefix(all, made);
          const items: Agent[] = [];
          for (let page = 1; page <= MAX_WALK_PAGES; page++) {
            const last = await list({ limit, page });
            expect(last.data.length, `limit=${limit}&page=${page}: item count`).toBe(
              Math.min(limit, Math.max(0, last.pagination!.total - (page - 1) * limit)),
            );
            items.push(...last.data);
            if (!last.pagination!.hasMore || items.length >= prefix) break;
          }
          return [all, items] as const;
        });
        reference = listed;
        const refIds = ids(listed);
        for (const a of made)
          expect(
            refIds.filter((id) => id === a.id),
            `agent ${a.id} in the listing at limit 100`,
          ).toHaveLength(1);
        const prefix = walkedPrefix(listed, made);
        const walkedIds = ids(walked);
        if (prefix === listed.length) expect(walkedIds, `limit=${limit}: the whole walk`).toEqual(refIds);
        else expect(walkedIds.slice(0, prefix), `limit=${limit}: the first ${prefix} items`).toEqual(refIds.slice(0, prefix));
        expect(new Set(walkedIds).size, `limit=${limit}: no agent twice`).toBe(walkedIds.length);
      }
      for (const a of made) {
        const listed = reference.find((x) => x.id === a.id);
        expect(listed, `listed ${a.id} equals GET /agents/${a.id}`).toEqual(expectOk(await api.getAgent(a.id)));
      }
    },
  );

  check("list.past-end", "a page past the end is 200 with data [] and the real total", async ({ api, agents }) => {
    await agents.create();
    const first = await listPage(api, { limit: 1 });
    expect(first.pagination!.total).toBeGreaterThanOrEqual(1);
    // each page past the end of the total read just before it
    for (const [limit, pageFor] of [
      [1, (total: number) => total + 1],
      [1, (total: number) => total + 7],
      [LIST_LIMITS.limit.max, (total: number) => Math.ceil(total / LIST_LIMITS.limit.max) + 1],
      [LIST_LIMITS.limit.default, () => LIST_LIMITS.maxInteger],
    ] as const) {
      await expectPastEnd(api, limit, pageFor);
    }
  });

  smoke("envelope.list", "pagination: totalPages = ceil(total / limit), hasMore = page < totalPages", async ({ api, agents }) => {
    await agents.create();
    await agents.create();
    for (const limit of [1, 2, 3, 7, LIST_LIMITS.limit.default, LIST_LIMITS.limit.max]) {
      const first = await listPage(api, { limit });
      expectPagination(first, 1, limit, `limit=${limit}`);
      const totalPages = Math.ceil(first.pagination!.total / limit);
      if (totalPages > 1)
        expectPagination(
          await listPage(api, { limit, page: totalPages }),
          totalPages,
          limit,
          `limit=${limit}&page=${totalPages}`,
        );
    }
  });
});
