import { describe, expect, test } from "vitest";
import {
  type AgentInput,
  type AgentOperation,
  type AgentOutput,
  agentHistoryModel,
  clauseOfWitness,
  isPureAgentOperation,
} from "./agent-history.js";
import { simulatedAgentHistory } from "./agent-history.simulate.js";
import { type JsonObject, predictCreate, recordOf } from "./agents.js";
import { checkLinearizable, minimalWitness } from "./linearizability.js";

const created = (name: string): JsonObject => {
  const p = predictCreate({ name });
  if (!p.ok) throw new Error(p.field);
  return p.value;
};

const ID = "agt_1";
const record = (config: JsonObject) =>
  recordOf({ id: ID, config, createdAt: "2026-11-28T00:00:00.000Z", updatedAt: "2026-11-28T00:00:00.000Z" });
const model = agentHistoryModel(new Map([[ID, created("A")]]));

let seq = 0;
const op = (client: number, call: number, ret: number, input: AgentInput, output: AgentOutput): AgentOperation => ({
  id: seq++,
  client,
  partition: ID,
  call,
  ret,
  input,
  output,
});
const judge = (history: AgentOperation[]) => checkLinearizable(history, model, { isPure: isPureAgentOperation });
const clauseOf = (history: AgentOperation[]) => {
  const verdict = judge(history);
  if (verdict.linearizable !== false) return undefined;
  return clauseOfWitness(minimalWitness(verdict.witness, model, ID, () => true));
};

describe("the agent model of concurrent histories", () => {
  test("two overlapping PATCHes: the reads may see them in either order, but each sees both fields of one", () => {
    const both = (tag: string) => ({ name: `n-${tag}`, bio: `b-${tag}` });
    const configAfter = (...tags: string[]) => Object.assign(created("A"), ...tags.map(both));
    const patches = [
      op(1, 0, 50, { kind: "patch", body: both("1") }, { status: 200, record: record(configAfter("1")) }),
      op(2, 10, 60, { kind: "patch", body: both("2") }, { status: 200, record: record(configAfter("1", "2")) }),
    ];
    expect(
      judge([...patches, op(3, 70, 80, { kind: "get" }, { status: 200, record: record(configAfter("1", "2")) })]).linearizable,
    ).toBe(true);
    // a read showing one field of each: no serial order makes it
    const torn = { ...configAfter("2"), bio: "b-1" };
    expect(clauseOf([...patches, op(3, 20, 30, { kind: "get" }, { status: 200, record: record(torn) })])).toBe(
      "update.merge-patch",
    );
  });

  test("a read after a completed delete that still finds the agent breaks delete.gone", () => {
    const history = [
      op(1, 0, 10, { kind: "delete" }, { status: 200 }),
      op(2, 20, 30, { kind: "get" }, { status: 200, record: record(created("A")) }),
    ];
    expect(clauseOf(history)).toBe("delete.gone");
    // overlapping, the read may come first
    expect(judge([history[0]!, op(2, 5, 30, { kind: "get" }, { status: 200, record: record(created("A")) })]).linearizable).toBe(
      true,
    );
  });

  test("two messages of one conversation that take the same turn break message.turn", () => {
    const message = (client: number, turn: number) =>
      op(client, 0, 10, { kind: "message", userId: "u1" }, { status: 200, turn, conversationId: "c1" });
    expect(judge([message(1, 1), message(2, 2)]).linearizable).toBe(true);
    expect(clauseOf([message(1, 1), message(2, 1)])).toBe("message.turn");
  });

  test("a message to an inactive agent is refused 503, and a lost PATCH may or may not have taken effect", () => {
    const inactive = op(1, 0, Number.POSITIVE_INFINITY, { kind: "patch", body: { status: "inactive" } }, { status: 0 });
    const refused = op(2, 5, 10, { kind: "message", userId: "u1" }, { status: 503, code: "AGENT_UNAVAILABLE" });
    const answered = op(2, 5, 10, { kind: "message", userId: "u1" }, { status: 200, turn: 1, conversationId: "c" });
    expect(judge([inactive, refused]).linearizable).toBe(true);
    expect(judge([inactive, answered]).linearizable).toBe(true);
  });

  test("a message to an active agent answered 503 once its time budget passed takes no turn; answered at once, no serial order explains it", () => {
    const spent = { status: 503, code: "AGENT_UNAVAILABLE" };
    const turnOne = op(2, 40, 50, { kind: "message", userId: "u1" }, { status: 200, turn: 1, conversationId: "c" });
    // PROFILE §5: past the budget, 503 AGENT_UNAVAILABLE, and a failed exchange takes no turn
    expect(
      judge([op(1, 0, 31_000, { kind: "message", userId: "u1" }, { ...spent, budgetSpent: true }), turnOne]).linearizable,
    ).toBe(true);
    // the same answer at once says the active agent was unavailable: no serial order explains it
    expect(clauseOf([op(1, 0, 10, { kind: "message", userId: "u1" }, spent), turnOne])).toBe("update.merge-patch");
  });

  test("histories of a real agent under concurrent clients are linearizable, however they interleave", () => {
    for (let seed = 1; seed <= 30; seed++) {
      const { history, initial } = simulatedAgentHistory(seed, { agents: 3, clients: 4, opsPerClient: 12 });
      expect(checkLinearizable(history, agentHistoryModel(initial)).linearizable, `seed ${seed}`).toBe(true);
    }
  });
});
