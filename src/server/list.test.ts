import { describe, expect, test } from "vitest";
import { type Agent, compareCodePoints } from "../contract/index.js";
import { ACCOUNTS, KEYS, loadBoundaries, makeServer, seedAgents, type TestServer } from "./test-support.js";
import { agentOf, expectError, fieldsOf, listOf } from "./test-support-answers.js";

const queryRows = loadBoundaries<{
  rows: { query: string; status: 200 | 400; page?: number; limit?: number; field?: string }[];
}>("list-query.json").rows;
const codePointNames = loadBoundaries<{ ascending: string[] }>("code-point-order.json").ascending;

const SORTS = (["createdAt", "name", "status"] as const).flatMap((sortBy) =>
  (["asc", "desc"] as const).map((order) => ({ sortBy, order })),
);

/** The order PROFILE §5 asks for, written independently of the server. */
function expectedOrder(agents: Agent[], sortBy: "createdAt" | "name" | "status", order: "asc" | "desc"): string[] {
  const dir = order === "asc" ? 1 : -1;
  const key = (a: Agent) => (sortBy === "createdAt" ? Date.parse(a.createdAt) : a[sortBy]);
  return [...agents]
    .sort((x, y) => {
      const kx = key(x);
      const ky = key(y);
      const primary = typeof kx === "number" ? kx - (ky as number) : compareCodePoints(kx, ky as string);
      return dir * (primary || compareCodePoints(x.id, y.id));
    })
    .map((a) => a.id);
}

/** Agents with repeated names, all three statuses, and createdAt ties (the clock moves only now and then). */
async function seedVaried(s: TestServer, count: number): Promise<Agent[]> {
  const names = ["Bea", "ada", "Ada", "Bea", "émile", "Zed", "😀", "ｚ"];
  for (let i = 0; i < count; i++) {
    const [agent] = seedAgents(s.ctx, ACCOUNTS.main, [
      { name: names[i % names.length]!, status: i % 4 === 1 ? "inactive" : "active" },
    ]);
    if (i % 5 === 2) s.ctx.store.setStatus(ACCOUNTS.main, agent!.id, "error");
    if (i % 3 === 0) await s.clock.advance(1);
  }
  return listOf(await s.call("GET", "/v1/agents?limit=100")).data;
}

async function walk(s: TestServer, query: string): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 1; ; page++) {
    const { data, pagination } = listOf(await s.call("GET", `/v1/agents?${query}&page=${page}`));
    ids.push(...data.map((a) => a.id));
    if (!pagination.hasMore) return ids;
    expect(page).toBeLessThan(100);
  }
}

describe("§5 list parameters", () => {
  test.for(queryRows)("§5 list ?$query → $status", async (row) => {
    const s = makeServer();
    seedAgents(s.ctx, ACCOUNTS.main, [{ name: "A" }, { name: "B" }, { name: "C" }]);
    const res = await s.call("GET", `/v1/agents${row.query ? `?${row.query}` : ""}`);
    if (row.status === 200) {
      const { pagination } = listOf(res);
      expect({ page: pagination.page, limit: pagination.limit }).toEqual({ page: row.page, limit: row.limit });
    } else {
      expectError(res, 400, "INVALID_REQUEST");
      expect(fieldsOf(res)).toEqual([row.field]);
    }
  });

  test("§5 list defaults: page 1, limit 20, all statuses, newest first", async () => {
    const s = makeServer();
    const all = await seedVaried(s, 25);
    const { data, pagination } = listOf(await s.call("GET", "/v1/agents"));
    expect(pagination).toEqual({ page: 1, limit: 20, total: 25, totalPages: 2, hasMore: true });
    expect(data.map((a) => a.id)).toEqual(expectedOrder(all, "createdAt", "desc").slice(0, 20));
  });
});

describe("§5 list filter, order and pages", () => {
  test.for(["active", "inactive", "error"] as const)("§5 status=%s lists exactly the agents in that status", async (status) => {
    const s = makeServer();
    const all = await seedVaried(s, 20);
    const { data, pagination } = listOf(await s.call("GET", `/v1/agents?status=${status}&limit=100`));
    const expected = all.filter((a) => a.status === status).map((a) => a.id);
    expect(expected.length).toBeGreaterThan(0);
    expect(data.map((a) => a.id).sort()).toEqual(expected.sort());
    expect(pagination.total).toBe(expected.length);
  });

  test.for(SORTS)("§5 sortBy=$sortBy order=$order, ties broken by id in the same direction", async ({ sortBy, order }) => {
    const s = makeServer();
    const all = await seedVaried(s, 30);
    const { data } = listOf(await s.call("GET", `/v1/agents?sortBy=${sortBy}&order=${order}&limit=100`));
    expect(data.map((a) => a.id)).toEqual(expectedOrder(all, sortBy, order));
  });

  test.for(["asc", "desc"] as const)("§5 names compare by code point, not UTF-16 unit (order=%s)", async (order) => {
    const s = makeServer();
    seedAgents(
      s.ctx,
      ACCOUNTS.main,
      [...codePointNames].reverse().map((name) => ({ name })),
    );
    const { data } = listOf(await s.call("GET", `/v1/agents?sortBy=name&order=${order}&limit=100`));
    expect(data.map((a) => a.name)).toEqual(order === "asc" ? codePointNames : [...codePointNames].reverse());
  });

  test("§5 createdAt compares as time; equal times fall back to id", async () => {
    const s = makeServer();
    const sameTime = seedAgents(s.ctx, ACCOUNTS.main, [{ name: "a" }, { name: "b" }, { name: "c" }]);
    await s.clock.advance(1);
    const [later] = seedAgents(s.ctx, ACCOUNTS.main, [{ name: "d" }]);
    const asc = listOf(await s.call("GET", "/v1/agents?sortBy=createdAt&order=asc")).data.map((a) => a.id);
    expect(asc).toEqual([...sameTime.map((a) => a.id).sort(compareCodePoints), later!.id]);
  });

  test.for(SORTS)("§5 walking all pages (sortBy=$sortBy, order=$order) yields every agent exactly once", async (sort) => {
    const s = makeServer();
    const all = await seedVaried(s, 57);
    const ids = await walk(s, `sortBy=${sort.sortBy}&order=${sort.order}&limit=7`);
    expect(ids).toEqual(expectedOrder(all, sort.sortBy, sort.order));
    expect(new Set(ids).size).toBe(57);
  });

  test("§5 list items have the same shape as Get", async () => {
    const s = makeServer();
    await s.createAgent({
      name: "Ada",
      platforms: { discord: { enabled: true, token: "t" } },
      modelSettings: { temperature: 1 },
    });
    await s.createAgent({ name: "Bob", bio: "b" });
    for (const item of listOf(await s.call("GET", "/v1/agents")).data)
      expect(item).toEqual(agentOf(await s.call("GET", `/v1/agents/${item.id}`)));
  });

  test("§5 a page past the end: 200, data [], the real total and totalPages", async () => {
    const s = makeServer();
    seedAgents(s.ctx, ACCOUNTS.main, [{ name: "A" }, { name: "B" }, { name: "C" }]);
    for (const page of [3, 4, 1000]) {
      const { data, pagination } = listOf(await s.call("GET", `/v1/agents?limit=1&page=${page}`));
      expect({ items: data.length, ...pagination }).toEqual({
        items: page === 3 ? 1 : 0,
        page,
        limit: 1,
        total: 3,
        totalPages: 3,
        hasMore: false,
      });
    }
  });

  test("§5 §6 only the calling account's agents are listed", async () => {
    const s = makeServer();
    seedAgents(s.ctx, ACCOUNTS.other, [{ name: "Theirs" }, { name: "Theirs too" }]);
    const [mine] = seedAgents(s.ctx, ACCOUNTS.main, [{ name: "Mine" }]);
    for (const status of ["", "status=active", "sortBy=name&order=asc"]) {
      const { data, pagination } = listOf(await s.call("GET", `/v1/agents?${status}`));
      expect({ ids: data.map((a) => a.id), total: pagination.total }).toEqual({ ids: [mine!.id], total: 1 });
    }
    expect(listOf(await s.call("GET", "/v1/agents", { key: KEYS.other })).pagination.total).toBe(2);
  });
});
