import fc from "fast-check";
import type { AgentInput, AgentOperation, AgentOutput } from "./agent-history.js";
import { type JsonObject, predictCreate, predictUpdate, recordOf } from "./agents.js";

/**
 * Histories a correct service makes, for the checker's tests and its benchmark: clients send
 * operations one after another, each taking effect at one instant between its call and its
 * return, applied in that order to agents that behave as PROFILE §5 says. Every such history is
 * linearizable by construction, however the calls overlap.
 */

interface SimAgent {
  exists: boolean;
  config: JsonObject;
  turns: Map<string, number>;
}

const STAMP = "2026-11-28T00:00:00.000Z";

function serve(id: string, agent: SimAgent, input: AgentInput): AgentOutput {
  if (!agent.exists) return { status: 404 };
  switch (input.kind) {
    case "get":
    case "listed":
      return { status: 200, record: recordOf({ id, config: agent.config, createdAt: STAMP, updatedAt: STAMP }) };
    case "patch": {
      const next = predictUpdate(agent.config, input.body);
      if (!next.ok) return { status: 400 };
      agent.config = next.value.config;
      return { status: 200, record: recordOf({ id, config: agent.config, createdAt: STAMP, updatedAt: STAMP }) };
    }
    case "delete":
      agent.exists = false;
      return { status: 200 };
    case "message": {
      if (agent.config.status !== "active") return { status: 503, code: "AGENT_UNAVAILABLE" };
      const turn = (agent.turns.get(input.userId) ?? 0) + 1;
      agent.turns.set(input.userId, turn);
      return { status: 200, turn, conversationId: `${id}-${input.userId}` };
    }
  }
}

const inputArb = (tag: string): fc.Arbitrary<AgentInput> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constant<AgentInput>({ kind: "get" }) },
    { weight: 1, arbitrary: fc.constant<AgentInput>({ kind: "listed" }) },
    {
      weight: 5,
      arbitrary: fc.constantFrom<AgentInput>(
        { kind: "patch", body: { name: `n-${tag}` } },
        { kind: "patch", body: { name: `n-${tag}`, bio: `b-${tag}` } },
        { kind: "patch", body: { status: "inactive" } },
        { kind: "patch", body: { status: "active" } },
      ),
    },
    { weight: 3, arbitrary: fc.constantFrom<AgentInput>({ kind: "message", userId: "u1" }, { kind: "message", userId: "u2" }) },
    { weight: 1, arbitrary: fc.constant<AgentInput>({ kind: "delete" }) },
  );

export interface SimulationSize {
  agents: number;
  clients: number;
  opsPerClient: number;
}

/** One history of `size`, drawn from `seed`; the agents' configurations before it begins. */
export function simulatedAgentHistory(
  seed: number,
  size: SimulationSize,
): { history: AgentOperation[]; initial: Map<string, JsonObject> } {
  const step = (c: number, i: number) =>
    fc.record({
      agent: fc.nat({ max: size.agents - 1 }),
      input: inputArb(`${c}-${i}`),
      think: fc.integer({ min: 0, max: 20 }),
      length: fc.integer({ min: 1, max: 40 }),
      at: fc.double({ min: 0, max: 1, noNaN: true }),
    });
  const plan = fc.tuple(
    ...Array.from({ length: size.clients }, (_, c) =>
      fc.tuple(...Array.from({ length: size.opsPerClient }, (_, i) => step(c, i))),
    ),
  );
  const [clients] = fc.sample(plan, { seed, numRuns: 1 });
  if (!clients) throw new Error("fast-check drew no plan");
  const ids = Array.from({ length: size.agents }, (_, i) => `agt_${i}`);
  const initial = new Map<string, JsonObject>();
  const agents = new Map<string, SimAgent>();
  for (const id of ids) {
    const created = predictCreate({ name: id });
    if (!created.ok) throw new Error(created.field);
    initial.set(id, created.value);
    agents.set(id, { exists: true, config: created.value, turns: new Map() });
  }
  const timed = clients.flatMap((ops, c) => {
    let now = 0;
    return ops.map((o) => {
      const call = now + o.think;
      const ret = call + o.length;
      now = ret;
      return { ...o, client: c + 1, call, ret, effect: call + o.at * o.length };
    });
  });
  const history: AgentOperation[] = [];
  for (const o of [...timed].sort((a, b) => a.effect - b.effect)) {
    const id = ids[o.agent] ?? "";
    const agent = agents.get(id);
    if (!agent) continue;
    history.push({
      id: history.length,
      client: o.client,
      partition: id,
      call: o.call,
      ret: o.ret,
      input: o.input,
      output: serve(id, agent, o.input),
    });
  }
  return { history, initial };
}
