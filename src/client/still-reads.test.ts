import { describe, expect, test } from "vitest";
import type { Query } from "./client.js";
import { queryString } from "./client.js";
import { readWhileStill, STILL_TRIES } from "./still-reads.js";

/** A lister over an account whose total each call may move: `totals(call, query)` answers the nth call. */
function account(totals: (call: number, query: string) => number) {
  let calls = 0;
  const asked: string[] = [];
  const list = async (query: Query) => {
    const q = queryString(query);
    asked.push(q);
    return { pagination: { total: totals(calls++, q) } };
  };
  return { list, asked };
}

/** A walk of three pages of one filter, returning the totals it saw. */
const walk = async (list: (q: Query) => Promise<{ pagination?: { total: number } }>, filter: Record<string, string> = {}) => {
  const seen: number[] = [];
  for (const page of [1, 2, 3]) seen.push((await list({ ...filter, limit: 1, page })).pagination?.total ?? -1);
  return seen;
};

describe("readWhileStill", () => {
  test("an account that holds still: the read's value, once, bracketed by two reads of the whole account", async () => {
    const { list, asked } = account(() => 7);
    expect(await readWhileStill(list, (l) => walk(l))).toEqual({ still: true, value: [7, 7, 7] });
    expect(asked).toEqual(["limit=1", "limit=1&page=1", "limit=1&page=2", "limit=1&page=3", "limit=1"]);
  });

  test("a total that moves mid-walk is read again; still on the second try, that try's value", async () => {
    // the first try's third page sees another client's agent; then the account holds still
    const { list } = account((call) => (call === 3 ? 8 : 7));
    expect(await readWhileStill(list, (l) => walk(l))).toEqual({ still: true, value: [7, 7, 7] });
  });

  test("a total that moves between the walk and the read after it is read again too", async () => {
    const { list, asked } = account((call) => (call >= 4 && call < 5 ? 6 : 7));
    const outcome = await readWhileStill(list, (l) => walk(l));
    expect(outcome).toEqual({ still: true, value: [7, 7, 7] });
    expect(asked).toHaveLength(10);
  });

  test("an account that never holds still: not still, each try's moving totals named", async () => {
    const { list } = account((call) => call);
    const outcome = await readWhileStill(list, (l) => walk(l));
    expect(outcome.still).toBe(false);
    if (outcome.still) return;
    expect(outcome.moved).toHaveLength(STILL_TRIES);
    expect(outcome.moved[0]).toBe("0 → 1 → 2 → 3 → 4");
  });

  test("pages of a filter are compared with each other, not with the whole account's total", async () => {
    // ?status=active counts 3 of the account's 7: a filter's total differs by right
    const { list } = account((_, q) => (q.includes("status=active") ? 3 : 7));
    expect(await readWhileStill(list, (l) => walk(l, { status: "active" }))).toEqual({ still: true, value: [3, 3, 3] });
  });

  test("a filter whose pages disagree is named with its query", async () => {
    const { list } = account((call, q) => (q.includes("status=active") ? (call % 2 ? 3 : 4) : 7));
    const outcome = await readWhileStill(list, (l) => walk(l, { status: "active" }), 1);
    expect(outcome).toEqual({ still: false, moved: ["?status=active 3 → 4"] });
  });
});
