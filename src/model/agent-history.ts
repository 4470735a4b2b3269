import { type ClauseId, isRecord } from "../contract/index.js";
import { canonicalJson, isJson, type JsonObject, predictUpdate, recordOf } from "./agents.js";
import type { Operation, SequentialModel } from "./linearizability.js";

/**
 * The sequential model of one agent that concurrent histories are checked against
 * (src/model/linearizability.ts): PROFILE §5 for Get, Update, Delete, Send Message and a List
 * entry, with the prediction rules of the stateful suite's model (RFC 7396 merge, `null` resets,
 * the record as a Get shows it, one conversation per userId with its turns). Partitioned by agent:
 * no operation here reads or writes two agents.
 */

/** One operation on an agent, as the history records it. */
export type AgentInput =
  | { kind: "get" }
  | { kind: "patch"; body: JsonObject }
  | { kind: "delete" }
  | { kind: "message"; userId: string }
  /**
   * the agent's entry in a List answer that showed the whole account: present reads as a 200 with
   * its record, absent as a 404 (PROFILE §5: a deleted agent is gone from lists)
   */
  | { kind: "listed" };

/**
 * What the service answered. `status` 0: no answer came (a lost connection, an answer the
 * history cannot read), so the operation may or may not have taken effect.
 */
export interface AgentOutput {
  status: number;
  code?: string | undefined;
  /** the answer's X-Request-Id, for the finding's replay */
  requestId?: string | undefined;
  /** the record a Get, a PATCH or a List entry showed */
  record?: unknown;
  /** a Send Message's turn and conversation */
  turn?: number | undefined;
  conversationId?: string | undefined;
  /** a Send Message answered only once its time budget had passed (timed by the client, so never early) */
  budgetSpent?: boolean;
}

export type AgentOperation = Operation<AgentInput, AgentOutput>;

interface AgentState {
  exists: boolean;
  config: JsonObject;
  /** per userId: the conversation's id once answered, and its completed turns */
  conversations: Readonly<Record<string, { id?: string; turns: number }>>;
}

/** The fields the service makes, blanked: what is left is what the configuration predicts. */
const MADE_BY_SERVICE = { id: "", createdAt: "", updatedAt: "" };
const predictedText = new WeakMap<JsonObject, string>();
const shownText = new WeakMap<object, string | undefined>();

/** A configuration's record as a Get shows it, as canonical JSON (once per configuration: the search asks again and again). */
function predictedOf(config: JsonObject): string {
  let text = predictedText.get(config);
  if (text === undefined) {
    const predicted = recordOf({ ...MADE_BY_SERVICE, config });
    text = isJson(predicted) ? canonicalJson(predicted) : "";
    predictedText.set(config, text);
  }
  return text;
}

/** A record the service showed, the same way; undefined when it is no record at all. */
function shownOf(record: unknown): string | undefined {
  if (!isRecord(record)) return undefined;
  if (shownText.has(record)) return shownText.get(record);
  const { id, createdAt, updatedAt } = record;
  const blanked = { ...record, ...MADE_BY_SERVICE };
  const text =
    typeof id === "string" && typeof createdAt === "string" && typeof updatedAt === "string" && isJson(blanked)
      ? canonicalJson(blanked)
      : undefined;
  shownText.set(record, text);
  return text;
}

/** Does a record the service showed read as the configuration (the fields the service makes aside)? */
const showsConfig = (record: unknown, config: JsonObject): boolean => {
  const shown = shownOf(record);
  return shown !== undefined && shown === predictedOf(config);
};

function afterPatch(state: AgentState, body: JsonObject): AgentState | undefined {
  const predicted = predictUpdate(state.config, body);
  return predicted.ok ? { ...state, config: predicted.value.config } : undefined;
}

function afterMessage(state: AgentState, userId: string, conversationId: string | undefined): AgentState {
  const now = state.conversations[userId] ?? { turns: 0 };
  const id = now.id ?? conversationId;
  return { ...state, conversations: { ...state.conversations, [userId]: { ...(id ? { id } : {}), turns: now.turns + 1 } } };
}

/** PROFILE §5 for one operation from one state: the states it may leave, none when the answer is impossible there. */
function step(state: AgentState, input: AgentInput, output: AgentOutput): AgentState[] {
  const { status } = output;
  const gone = { ...state, exists: false, conversations: {} };
  switch (input.kind) {
    case "get":
    case "listed":
      return (state.exists ? status === 200 && showsConfig(output.record, state.config) : status === 404) ? [state] : [];
    case "patch": {
      const next = state.exists ? afterPatch(state, input.body) : undefined;
      if (status === 0) return next ? [state, next] : [state];
      if (!state.exists) return status === 404 ? [state] : [];
      if (status === 400) return next ? [] : [state];
      return next && status === 200 && showsConfig(output.record, next.config) ? [next] : [];
    }
    case "delete":
      if (status === 0) return state.exists ? [state, gone] : [state];
      return (state.exists ? status === 200 : status === 404) ? [state.exists ? gone : state] : [];
    case "message": {
      const active = state.exists && state.config.status === "active";
      if (status === 0) return active ? [state, afterMessage(state, input.userId, undefined)] : [state];
      if (!state.exists) return status === 404 ? [state] : [];
      if (!active) return status === 503 ? [state] : [];
      // PROFILE §5: past its time budget a message is answered 503 AGENT_UNAVAILABLE and takes no
      // turn, the agent active or not (a loaded service may spend the budget even on a quick model)
      if (status === 503 && output.code === "AGENT_UNAVAILABLE" && output.budgetSpent) return [state];
      if (status !== 200) return [];
      const conversation = state.conversations[input.userId] ?? { turns: 0 };
      const sameConversation = conversation.id === undefined || conversation.id === output.conversationId;
      return output.turn === conversation.turns + 1 && sameConversation
        ? [afterMessage(state, input.userId, output.conversationId)]
        : [];
    }
  }
}

/** The model for agents created before the history began, each with its configuration then. */
export function agentHistoryModel(
  initial: ReadonlyMap<string, JsonObject>,
): SequentialModel<AgentState, AgentInput, AgentOutput> {
  return {
    init: (agentId) => ({ exists: initial.has(agentId), config: initial.get(agentId) ?? {}, conversations: {} }),
    step,
    key: (s) => canonicalJson({ exists: s.exists, config: s.config, conversations: s.conversations }),
  };
}

/**
 * An operation that changes no state whatever its answer said: a read, or a refusal (a 404, a 400,
 * a 503 has no effect). The witness may leave it out (linearizability.ts `minimalWitness`).
 */
export const isPureAgentOperation = (op: AgentOperation): boolean =>
  op.input.kind === "get" || op.input.kind === "listed" || (op.output.status !== 200 && op.output.status !== 0);

/** The clause a history no serial order explains breaks, by what its witness did. */
export function clauseOfWitness(witness: readonly AgentOperation[]): ClauseId {
  if (witness.some((op) => op.input.kind === "delete" && op.output.status === 200)) return "delete.gone";
  if (witness.some((op) => op.input.kind === "message" && op.output.status === 200)) return "message.turn";
  return "update.merge-patch";
}

/** One line per operation of a witness, in call order: who, when (ms from the first call), what, what came back. */
export function formatWitness(witness: readonly AgentOperation[]): string[] {
  const start = Math.min(...witness.map((op) => op.call));
  const ms = (t: number) => (Number.isFinite(t) ? `${Math.round(t - start)}` : "∞");
  const what = (input: AgentInput) =>
    input.kind === "patch"
      ? `PATCH ${JSON.stringify(input.body)}`
      : input.kind === "message"
        ? `message (userId ${input.userId})`
        : input.kind === "listed"
          ? "list"
          : input.kind.toUpperCase();
  const answer = (o: AgentOutput) => {
    const record = isRecord(o.record) ? o.record : undefined;
    const shown = record ? ` ${JSON.stringify({ name: record.name, bio: record.bio, status: record.status })}` : "";
    const turn = o.turn !== undefined ? ` turn ${o.turn}` : "";
    return `${o.status === 0 ? "no answer" : o.status}${o.code ? ` ${o.code}` : ""}${turn}${shown}`;
  };
  return [...witness]
    .sort((a, b) => a.call - b.call)
    .map((op) => `client ${op.client} [${ms(op.call)}–${ms(op.ret)} ms] ${what(op.input)} → ${answer(op.output)}`);
}
