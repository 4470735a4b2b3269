import { describe } from "vitest";
import { type Agent, compareCodePoints, LIST_LIMITS } from "../../src/contract/index.js";
import { declareFile } from "../support/declare-file.js";
import { loadBoundaries } from "../support/fixtures.js";
import { check, expect, expectError, expectOk, smoke } from "../support/harness.js";
import { ids, listPage, MAX_WALK_PAGES, walkAll } from "../support/listing.js";

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
    const implicit = await listPage(api, {});
    const explicit = await listPage(api, { page: 1, limit: 20, sortBy: "createdAt", order: "desc" });
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
      const { items, total } = await walkAll(api, { status });
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
          const { items } = await walkAll(api, { sortBy, order });
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
      const reference = (await walkAll(api)).items;
      const refIds = ids(reference);
      for (const a of made)
        expect(
          refIds.filter((id) => id === a.id),
          `agent ${a.id} in the listing at limit 100`,
        ).toHaveLength(1);
      // A small account is walked whole; a large one up to the page holding the last of ours (newest first).
      const whole = reference.length <= FULL_WALK_MAX_TOTAL;
      const prefix = whole ? reference.length : Math.max(...made.map((a) => refIds.indexOf(a.id))) + 1;
      for (const limit of [1, 2, 3]) {
        const walked: Agent[] = [];
        for (let page = 1; page <= MAX_WALK_PAGES; page++) {
          const last = await listPage(api, { limit, page });
          expect(last.data.length, `limit=${limit}&page=${page}: item count`).toBe(
            Math.min(limit, Math.max(0, last.pagination!.total - (page - 1) * limit)),
          );
          walked.push(...last.data);
          if (!last.pagination!.hasMore || (!whole && walked.length >= prefix)) break;
        }
        const walkedIds = ids(walked);
        if (whole) expect(walkedIds, `limit=${limit}: the whole walk`).toEqual(refIds);
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
    const total = first.pagination!.total;
    expect(total).toBeGreaterThanOrEqual(1);
    for (const [limit, page] of [
      [1, total + 1],
      [1, total + 7],
      [LIST_LIMITS.limit.max, Math.ceil(total / LIST_LIMITS.limit.max) + 1],
      [LIST_LIMITS.limit.default, LIST_LIMITS.maxInteger],
    ] as const) {
      const res = await listPage(api, { limit, page });
      expect(res.data, `limit=${limit}&page=${page}: data`).toEqual([]);
      expect(res.pagination, `limit=${limit}&page=${page}: pagination`).toEqual({
        page,
        limit,
        total,
        totalPages: Math.ceil(total / limit),
        hasMore: false,
      });
    }
  });

  smoke("envelope.list", "pagination: totalPages = ceil(total / limit), hasMore = page < totalPages", async ({ api, agents }) => {
    await agents.create();
    await agents.create();
    let total: number | undefined;
    for (const limit of [1, 2, 3, 7, LIST_LIMITS.limit.default, LIST_LIMITS.limit.max]) {
      const first = await listPage(api, { limit });
      total ??= first.pagination!.total;
      const totalPages = Math.ceil(total / limit);
      expect(first.pagination, `limit=${limit}`).toEqual({ page: 1, limit, total, totalPages, hasMore: totalPages > 1 });
      expect(first.data.length, `limit=${limit}: items on page 1`).toBe(Math.min(limit, total));
      if (totalPages > 1) {
        const last = await listPage(api, { limit, page: totalPages });
        expect(last.pagination, `limit=${limit}&page=${totalPages}`).toEqual({
          page: totalPages,
          limit,
          total,
          totalPages,
          hasMore: false,
        });
        expect(last.data.length, `limit=${limit}&page=${totalPages}: items`).toBe(total - (totalPages - 1) * limit);
      }
    }
  });
});
