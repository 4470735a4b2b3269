import { describe, expect, test } from "vitest";
import { CLAUSE_BY_ID } from "../contract/index.js";
import { HISTORY_INVARIANTS, RunHistory, type SeenRecord } from "./history.js";
import {
  formatTransitionTable,
  leastReachedPair,
  MIN_PER_PAIR,
  mergeCounts,
  pairsBelowMinimum,
  STATUS_TRANSITIONS,
  transitionCoverage,
  transitionKey,
} from "./transitions.js";

const T0 = "2026-11-21T23:16:10.123Z";
const T1 = "2026-11-21T23:16:10.456Z";
const agent = (over: Partial<SeenRecord> = {}): SeenRecord => ({
  id: "agt_a",
  status: "active",
  createdAt: T0,
  updatedAt: T0,
  ...over,
});
const reply = { agentId: "agt_a", conversationId: "conv_1", turn: 1, userId: "u1", roomId: null };
const broken = (h: RunHistory) => h.take().map((v) => v.invariant);

describe("run history: the invariants over a whole run", () => {
  test("each invariant names a PROFILE clause that exists", () => {
    for (const [name, inv] of Object.entries(HISTORY_INVARIANTS))
      expect(CLAUSE_BY_ID.has(inv.clause), `${name} cites ${inv.clause}`).toBe(true);
  });

  test("a history that keeps them all reports nothing", () => {
    const h = new RunHistory();
    h.created(agent(), "create");
    h.read(agent({ updatedAt: T1, status: "inactive" }), "patch");
    h.replied(reply, "send");
    h.replied({ ...reply, turn: 2 }, "send");
    h.modelFailed("agt_a");
    h.read(agent({ updatedAt: T1, status: "error" }), "get");
    h.deleted("agt_a", "delete");
    expect(broken(h)).toEqual([]);
  });

  test.for([
    ["id-unique", (h: RunHistory) => h.created(agent(), "again")],
    [
      "deleted-stays-gone",
      (h: RunHistory) => {
        h.deleted("agt_a", "delete");
        h.read(agent(), "get");
      },
    ],
    ["created-at-fixed", (h: RunHistory) => h.read(agent({ createdAt: T1, updatedAt: T1 }), "get")],
    [
      "updated-at-forward",
      (h: RunHistory) => {
        h.read(agent({ updatedAt: T1 }), "patch");
        h.read(agent(), "get");
      },
    ],
    ["error-by-service", (h: RunHistory) => h.read(agent({ status: "error" }), "get")],
    [
      "error-by-service",
      // a failure counts until the agent leaves error; back in error needs a new one
      (h: RunHistory) => {
        h.modelFailed("agt_a");
        h.read(agent({ status: "error" }), "send");
        h.read(agent({ status: "active", updatedAt: T1 }), "patch");
        h.read(agent({ status: "error", updatedAt: T1 }), "get");
      },
    ],
    [
      "conversation-one-agent",
      (h: RunHistory) => {
        h.replied(reply, "a");
        h.replied({ ...reply, agentId: "agt_b" }, "b");
      },
    ],
    [
      "conversation-one-agent",
      (h: RunHistory) => {
        h.replied(reply, "a");
        h.replied({ ...reply, userId: "u2" }, "b");
      },
    ],
    [
      "conversation-turns",
      (h: RunHistory) => {
        h.replied(reply, "a");
        h.replied({ ...reply, turn: 3 }, "b");
      },
    ],
    ["conversation-turns", (h: RunHistory) => h.replied({ ...reply, turn: 2 }, "a")],
  ] as const)("%s: a history that breaks it is reported", ([invariant, breakIt]) => {
    const h = new RunHistory();
    h.created(agent(), "create");
    breakIt(h);
    expect(broken(h)).toEqual([invariant]);
    expect(broken(h), "each violation is reported once").toEqual([]);
  });

  test("an agent first seen in a list (made before the run) starts its facts there, error included", () => {
    const h = new RunHistory();
    h.read(agent({ status: "error" }), "list");
    h.read(agent({ status: "error" }), "get");
    h.replied({ ...reply, turn: 5 }, "send");
    expect(broken(h)).toEqual([]);
  });

  test("another client's agent may go into error: its messages are not the run's to see", () => {
    const h = new RunHistory();
    h.read(agent(), "list");
    h.read(agent({ status: "error", updatedAt: T1 }), "list");
    expect(broken(h)).toEqual([]);
  });
});

describe("status transitions: the from → to table", () => {
  test("every allowed pair cites a clause that exists; forbidden pairs read ·", () => {
    for (const t of STATUS_TRANSITIONS) expect(CLAUSE_BY_ID.has(t.clause), `${t.from}>${t.to}`).toBe(true);
    const table = formatTransitionTable({ [transitionKey("active", "error")]: 3 });
    expect(table.split("\n")[0]).toBe(`status transitions: 1 of ${STATUS_TRANSITIONS.length} allowed pairs reached`);
    expect(table).toMatch(/^inactive\s+0\s+0\s+·\s+0$/m);
    expect(table).toMatch(/^active\s+0\s+0\s+3\s+0$/m);
    // each pair below the minimum is a line of its own; one reached 3 times is not
    expect(table).toContain(`  error → inactive: reached 0 times, below ${MIN_PER_PAIR}`);
    expect(table).not.toContain("active → error: reached");
    const full = Object.fromEntries(STATUS_TRANSITIONS.map((t) => [transitionKey(t.from, t.to), MIN_PER_PAIR]));
    expect(formatTransitionTable(full).split("\n")[0]).toBe(
      `status transitions: ${STATUS_TRANSITIONS.length} of ${STATUS_TRANSITIONS.length} allowed pairs reached, each at least ${MIN_PER_PAIR} times`,
    );
    expect(pairsBelowMinimum(full)).toEqual([]);
  });

  test("a model-guided command steers toward the pair least taken, ties by the table's order from its offset", () => {
    const [first, second, third] = STATUS_TRANSITIONS;
    const counts = { [transitionKey(first!.from, first!.to)]: 2, [transitionKey(second!.from, second!.to)]: 1 };
    expect(leastReachedPair(counts, 0, STATUS_TRANSITIONS)).toBe(third);
    expect(leastReachedPair({}, 1, STATUS_TRANSITIONS)).toBe(second);
    expect(leastReachedPair({}, 0, [])).toBeUndefined();
  });

  test("coverage counts the allowed pairs reached, across merged runs", () => {
    const all = Object.fromEntries(STATUS_TRANSITIONS.map((t) => [transitionKey(t.from, t.to), 1]));
    const merged = mergeCounts([all, { [transitionKey("new", "active")]: 2 }]);
    expect(merged[transitionKey("new", "active")]).toBe(3);
    expect(transitionCoverage(merged)).toEqual({ reached: STATUS_TRANSITIONS.length, allowed: STATUS_TRANSITIONS.length });
    expect(transitionCoverage({}).reached).toBe(0);
  });
});
