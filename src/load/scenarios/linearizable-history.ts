import fc from "fast-check";
import { renameIdField } from "../../client/id-field.js";
import { type Agent, isRecord } from "../../contract/index.js";
import {
  type AgentInput,
  type AgentOperation,
  type AgentOutput,
  agentHistoryModel,
  clauseOfWitness,
  formatWitness,
  isPureAgentOperation,
} from "../../model/agent-history.js";
import { type JsonObject, predictCreate } from "../../model/agents.js";
import { checkLinearizable, minimalWitness } from "../../model/linearizability.js";
import type { ScenarioContext } from "../context.js";
import { InconclusiveError } from "../context.js";
import { defineScenario } from "../define.js";
import { type LoadRequest, requestTo } from "../requests.js";

/**
 * Concurrent histories checked for linearizability. A fixed list of scenarios finds only the races
 * it names; a service can break atomicity wherever two requests meet one record. Here several
 * clients send Get, Update, Delete, Send Message and List at once to a few shared agents, each
 * operation's invocation and completion recorded on one clock with its answer; then the history
 * must have one serial order, consistent with real time, in which every answer is the one PROFILE §5
 * gives (src/model/agent-history.ts; checked per agent by src/model/linearizability.ts).
 *
 * Reading PROFILE this way is its most careful reading: it describes each endpoint as one step on
 * one agent and says what holds "afterwards" (§5 Delete), which is real-time order.
 */

const AGENTS = 3;
const CLIENTS = 4;
const OPS_PER_CLIENT = 12;
const USER_IDS = ["u1", "u2"] as const;
const CHECK = "linearizable-history";

/** One operation of a client's schedule: the agent it addresses and what it does (values unique per schedule). */
type Planned = { agent: number } & (
  | { kind: "get" | "delete" | "list" }
  | { kind: "patch"; body: JsonObject }
  | { kind: "message"; userId: string }
);

/** PATCH bodies whose effects a later read tells apart: every value written once; two fields at once, so a half-applied update shows. */
const patchBody = (tag: string): fc.Arbitrary<JsonObject> =>
  fc.constantFrom<JsonObject>(
    { name: `n-${tag}` },
    { bio: `b-${tag}` },
    { name: `n-${tag}`, bio: `b-${tag}` },
    { personality: { traits: [`t-${tag}`] }, plugins: [`p-${tag.toLowerCase()}`] },
    { status: "inactive" },
    { status: "active" },
  );

/** A client's operations; Send Message only on a target with the PROFILE §10 mock models (a reply at once, known turns). */
function clientSchedule(client: number, withMessages: boolean): fc.Arbitrary<Planned[]> {
  const agent = fc.nat({ max: AGENTS - 1 });
  const step = (i: number): fc.Arbitrary<Planned> =>
    fc.oneof(
      { weight: 4, arbitrary: fc.record({ agent, kind: fc.constant("get" as const) }) },
      { weight: 5, arbitrary: fc.record({ agent, kind: fc.constant("patch" as const), body: patchBody(`${client}-${i}`) }) },
      {
        weight: withMessages ? 3 : 0,
        arbitrary: fc.record({ agent, kind: fc.constant("message" as const), userId: fc.constantFrom(...USER_IDS) }),
      },
      { weight: 1, arbitrary: fc.record({ agent, kind: fc.constant("list" as const) }) },
      // rare: once an agent is gone, every later operation on it only reads 404
      { weight: i >= OPS_PER_CLIENT - 3 ? 1 : 0, arbitrary: fc.record({ agent, kind: fc.constant("delete" as const) }) },
    );
  return fc.tuple(...Array.from({ length: OPS_PER_CLIENT }, (_, i) => step(i)));
}

/** The schedule of every client, drawn from the run's seed: the same seed sends the same operations. */
export function scheduleOf(seed: number, withMessages: boolean): Planned[][] {
  const clients = fc.tuple(...Array.from({ length: CLIENTS }, (_, c) => clientSchedule(c + 1, withMessages)));
  const [drawn] = fc.sample(clients, { seed, numRuns: 1 });
  if (!drawn) throw new Error("fast-check drew no schedule");
  return drawn;
}

function requestOf(op: Planned, id: string): LoadRequest {
  switch (op.kind) {
    case "get":
      return requestTo("getAgent", { agentId: id });
    case "patch":
      return requestTo("updateAgent", { agentId: id, body: op.body });
    case "delete":
      return requestTo("deleteAgent", { agentId: id });
    case "message":
      return requestTo("sendMessage", { agentId: id, body: { text: "in turn", userId: op.userId } });
    case "list":
      return requestTo("listAgents", { query: { limit: "100" } });
  }
}

const dataOf = (json: unknown) => (isRecord(json) ? json.data : undefined);

/** The operations one answer makes in the history: one per agent for a List that showed the whole account, else one. */
function operationsOf(
  op: Planned,
  ids: readonly string[],
  status: number,
  json: unknown,
  requestId: string | undefined,
  budgetSpent: boolean,
): { partition: string; input: AgentInput; output: AgentOutput }[] {
  const data = dataOf(json);
  if (op.kind === "list") {
    if (status !== 200 || !Array.isArray(data)) return [];
    const pagination = isRecord(json) ? json.pagination : undefined;
    const whole = isRecord(pagination) && pagination.hasMore === false && pagination.page === 1;
    return ids.flatMap((id) => {
      const record = data.find((r) => isRecord(r) && r.id === id);
      // absent from a page that is not the whole account proves nothing
      if (!record && !whole) return [];
      return [
        {
          partition: id,
          input: { kind: "listed" as const },
          output: record ? { status: 200, record, requestId } : { status: 404, requestId },
        },
      ];
    });
  }
  const partition = ids[op.agent]!;
  const code = isRecord(json) && isRecord(json.error) && typeof json.error.code === "string" ? json.error.code : undefined;
  const input: AgentInput =
    op.kind === "patch"
      ? { kind: "patch", body: op.body }
      : op.kind === "message"
        ? { kind: "message", userId: op.userId }
        : { kind: op.kind };
  const reply = isRecord(data) ? data : {};
  const output: AgentOutput = {
    status,
    code,
    requestId,
    ...(op.kind === "get" || op.kind === "patch" ? { record: data } : {}),
    ...(op.kind === "message" && typeof reply.turn === "number" ? { turn: reply.turn } : {}),
    ...(op.kind === "message" && typeof reply.conversationId === "string" ? { conversationId: reply.conversationId } : {}),
    ...(budgetSpent ? { budgetSpent } : {}),
  };
  return [{ partition, input, output }];
}

/**
 * An answer the model reads. Anything else leaves the operation's effect unknown: a 5xx or a 503
 * outside the Send Message cases PROFILE §5 names (§3 says such an answer is a defect, and the
 * response checks judge it as one: here it would only be blamed on the wrong clause), a status §5
 * does not give these requests.
 */
function readable(op: Planned, status: number, code: string | undefined): boolean {
  if (status === 503) return op.kind === "message" && code === "AGENT_UNAVAILABLE";
  return status === 200 || status === 400 || status === 404;
}

/**
 * Operations with a readable answer, at the least, for a verdict: unanswered writes fit any order
 * and unanswered reads are left out, so a history made mostly of them would pass whatever the service did.
 */
const READABLE_SHARE = 0.5;

async function linearizableHistory(ctx: ScenarioContext): Promise<void> {
  const key = ctx.loadKey;
  const schedule = scheduleOf(ctx.target.seed, ctx.target.referenceFaults === true);
  const initial = new Map<string, JsonObject>();
  const agents: Agent[] = [];
  for (let i = 0; i < AGENTS; i++) {
    const body = { name: ctx.name(`lin${i}`) };
    const created = await ctx.createAgent(key, body);
    const config = predictCreate(body);
    if (!config.ok) throw new Error(`the model rejects its own create body: ${config.field}`);
    initial.set(created.id, config.value);
    agents.push(created);
  }
  const ids = agents.map((a) => a.id);
  const history: AgentOperation[] = [];
  const budgetMs = ctx.target.messageTimeoutSeconds * 1000;
  const tally = { sent: 0, readable: 0, refused: 0, unanswered: 0, unread: 0 };
  const runClient = async (ops: readonly Planned[], client: number) => {
    for (const op of ops) {
      const call = performance.now();
      tally.sent++;
      let status = 0;
      let json: unknown;
      let ret = Number.POSITIVE_INFINITY;
      let requestId: string | undefined;
      let budgetSpent = false;
      try {
        const res = await ctx.single(key, requestOf(op, ids[op.agent]!));
        ret = performance.now();
        // PROFILE §7: a 429 has no effect; the operation is not in the history (it linearizes anywhere)
        if (res.status === 429) {
          tally.refused++;
          continue;
        }
        status = readable(op, res.status, res.code) ? res.status : 0;
        // PROFILE §11: the deployment's identifier field, read as the model's `id`
        json = op.kind === "message" ? res.json : renameIdField(res.json, ctx.target.idField);
        requestId = res.requestId;
        budgetSpent = op.kind === "message" && ret - call >= budgetMs;
        if (status === 0) {
          tally.unread++;
          ret = Number.POSITIVE_INFINITY;
        } else tally.readable++;
      } catch (error) {
        if (ctx.signal.aborted) throw error;
        tally.unanswered++;
        ctx.recorder.transportError(`${CHECK}: ${error instanceof Error ? error.message : String(error)}`);
      }
      // a read that got no answer tells nothing
      for (const made of operationsOf(op, ids, status, json, requestId, budgetSpent))
        if (status !== 0 || (made.input.kind !== "get" && made.input.kind !== "listed"))
          history.push({ id: history.length, client, call, ret, ...made });
    }
  };
  await Promise.all(schedule.map((ops, c) => runClient(ops, c + 1)));
  if (tally.readable < tally.sent * READABLE_SHARE)
    throw new InconclusiveError(
      `${tally.readable} of ${tally.sent} operations had an answer the model reads (${tally.refused} refused 429, ` +
        `${tally.unanswered} with no answer, ${tally.unread} with a status it does not read): too few to judge a history`,
    );
  const model = agentHistoryModel(initial);
  const verdict = checkLinearizable(history, model, { isPure: isPureAgentOperation });
  if (verdict.linearizable === "unknown")
    throw new InconclusiveError(`the linearizability search on agent ${verdict.partition} gave up after ${verdict.steps} steps`);
  if (verdict.linearizable === false) {
    // the clause: what the violation still needs once every operation it can do without is gone
    // (for naming only: the witness shown keeps every write, so it proves the violation on its own)
    const core = minimalWitness(verdict.witness, model, verdict.partition, () => true);
    ctx.fail(
      clauseOfWitness(core),
      CHECK,
      `one serial order of the concurrent operations on agent ${verdict.partition} that explains every answer (PROFILE §5, each operation one step, in real-time order; seed ${ctx.target.seed})`,
      `none explains these ${verdict.witness.length}: ${formatWitness(verdict.witness).join("; ")}`,
      verdict.witness.find((op) => op.output.requestId)?.output.requestId,
    );
  }
}

export const LINEARIZABLE_HISTORY = defineScenario({
  id: CHECK,
  title: `${CLIENTS} clients × ${OPS_PER_CLIENT} operations at once on ${AGENTS} shared agents: one serial order explains every answer (linearizability)`,
  clauses: ["update.merge-patch", "delete.gone", "message.turn"],
  latency: { note: "ordinary requests, several clients at once on the same agents", judged: true },
  quickGroup: 5,
  estimateSeconds: () => 3,
  run: linearizableHistory,
});
