import { describe, expect, test } from "vitest";
import { type Agent, compareCodePoints } from "../contract/index.js";
import { ConversationModel, predictCreate, predictList, predictUpdate, readListQuery } from "./agents.js";

/* Hand-written examples straight from PROFILE (STYLE §2): the model must not agree with itself when wrong. */

describe("model: create and update (PROFILE §5)", () => {
  test("a partial nested object keeps the other defaults", () => {
    const created = predictCreate({ name: "a", modelSettings: { model: "mock-slow" } });
    expect(created).toMatchObject({ ok: true, value: { modelSettings: { provider: "mock", model: "mock-slow" }, bio: "" } });
  });

  test("a platform needs enabled when it first appears", () => {
    expect(predictCreate({ name: "a", platforms: { discord: { token: "t" } } })).toEqual({
      ok: false,
      field: "platforms.discord.enabled",
    });
    expect(predictUpdate({ platforms: { discord: { enabled: true } } }, { platforms: { discord: { token: "t" } } }).ok).toBe(
      true,
    );
  });

  test("null resets to the default or removes an optional field; arrays replace", () => {
    const base = predictCreate({ name: "a", bio: "b", modelSettings: { temperature: 1 }, plugins: ["x", "y"] });
    if (!base.ok) throw new Error("valid");
    const next = predictUpdate(base.value, { bio: null, modelSettings: { temperature: null }, plugins: ["z"] });
    expect(next).toMatchObject({ ok: true, value: { changed: true, config: { bio: "", plugins: ["z"] } } });
    if (next.ok) expect(next.value.config.modelSettings).toEqual({ provider: "mock", model: "mock-1" });
  });

  test("{} and a same-value patch change nothing (updatedAt stays)", () => {
    const base = predictCreate({ name: "a" });
    if (!base.ok) throw new Error("valid");
    expect(predictUpdate(base.value, {})).toMatchObject({ ok: true, value: { changed: false } });
    expect(predictUpdate(base.value, { status: "active" })).toMatchObject({ ok: true, value: { changed: false } });
  });
});

describe("model: list (PROFILE §5)", () => {
  const agent = (id: string, name: string, status: Agent["status"], ms: number) =>
    ({ id, name, status, createdAt: new Date(ms).toISOString() }) as Agent;

  test("strings compare by code point, not UTF-16 unit", () => {
    // U+FF21 is one unit below the surrogates of U+1F600 in UTF-16, but a smaller code point
    expect(compareCodePoints("\uff21", "😀")).toBeLessThan(0);
    expect("\uff21" < "😀").toBe(false);
  });

  test("ties broken by id in the same direction; page past the end keeps the totals", () => {
    const records = [agent("b", "x", "active", 1), agent("a", "x", "active", 2), agent("c", "w", "inactive", 3)];
    expect(predictList(records, { ...readListQuery({ sortBy: "name", order: "desc" }) }).ids).toEqual(["b", "a", "c"]);
    expect(predictList(records, { ...readListQuery({ sortBy: "name", order: "asc" }) }).ids).toEqual(["c", "a", "b"]);
    expect(predictList(records, readListQuery({ page: "3", limit: "02" }))).toEqual({
      ids: [],
      pagination: { page: 3, limit: 2, total: 3, totalPages: 2, hasMore: false },
    });
  });
});

describe("model: conversations (PROFILE §5)", () => {
  test("the same (agent, userId, roomId) continues; with neither, each message is new", () => {
    const model = new ConversationModel();
    const key = ConversationModel.key("a", "u1");
    expect(model.nextTurn(key)).toBe(1);
    model.completed(key, "c1");
    expect([model.nextTurn(key), model.expectedId(key)]).toEqual([2, "c1"]);
    expect(ConversationModel.key("a")).toBeUndefined();
    expect(model.nextTurn(ConversationModel.key("a", "u1", "r1"))).toBe(1);
  });
});
