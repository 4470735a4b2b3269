import fc from "fast-check";
import { describe, vi } from "vitest";
import { agentName, FAILING_MODEL, invalidBody, validCreateBody, validPatch } from "../../src/arbitraries/bodies.js";
import { TEXT_POOL } from "../../src/arbitraries/messages.js";
import { validListQuery } from "../../src/arbitraries/queries.js";
import type { ApiResult } from "../../src/client/index.js";
import {
  AGENT_DEFAULTS,
  AGENT_STATUSES,
  type Agent,
  type AgentStatus,
  isRecord,
  type MessageReply,
  SORT_FIELDS,
  SORT_ORDERS,
} from "../../src/contract/index.js";
import {
  ConversationModel,
  type JsonObject,
  type ModelAgent,
  predictCreate,
  predictList,
  predictUpdate,
  readListQuery,
  recordOf,
} from "../../src/model/agents.js";
import {
  describeShortfall,
  leastReachedPair,
  MIN_PER_PAIR,
  pairsBelowMinimum,
  STATUS_TRANSITIONS,
  type TransitionFrom,
  type TransitionTo,
  transitionKey,
} from "../../src/model/transitions.js";
import { declareFile } from "../support/declare-file.js";
import { check, expect, HarnessError, Inconclusive, MODEL_FAILED, target } from "../support/harness.js";
import { expectEqual } from "./cases.js";
import { askAgain, judgeList } from "./foreign.js";
import {
  BUDGETED,
  expectHistoryKept,
  firstClient,
  listAccount,
  nextClient,
  outcomeOf,
  rememberTokens,
  runProperty,
  runsFor,
  skipUnlessReplayed,
  tally,
  transition,
  unlessBudgetEnded,
} from "./support.js";

declareFile({ sendsMessages: true });

/*
 * Random sequences of create, get, list, patch (status active ↔ inactive included),
 * delete, send message (stream or not) and reads after delete, against the target and the
 * model; after every step the target's answer must equal the model's (status, code, body).
 * This finds the bugs that need a history of calls before they show.
 *
 * The commands drive each agent through every status transition PROFILE allows (the from → to
 * table of src/model/transitions.ts, counted into the run's summary): into error through a model
 * failure (PROFILE §10 mock-error), out of it by each road (PATCH active, PATCH inactive, delete),
 * and every endpoint on it meanwhile (a patch without status, messages, lists filtered by status).
 * Creates come in bursts too, so createdAt ties; names come from a small pool too, so they collide.
 * After each step, besides the model, the run's whole history keeps its invariants
 * (src/model/history.ts).
 */

vi.setConfig({ testTimeout: 20 * 60_000 });

const bodyOptions = { namePrefix: target.runPrefix, referenceModels: target.referenceFaults };
/** Sequences the budget affords: all 200 on a reference target the harness started, else the stateful share of the requests. */
const SEQUENCES = runsFor(200, { requests: 0.2, creates: 0.2 }, { requests: 35, creates: 3 });
/**
 * Sequences whose random and model-guided commands take most pairs 3 times on a paced
 * deployment: 12 at W = 5 s took each at least 6 times at seed 7, but error → deleted twice at
 * seed 11. So on a deployment every sequence ends with a tour of the pairs it left below its share
 * of the minimum (`tour`). A budget that affords fewer than this many (W = 60 s: one) is sparse:
 * there the follow-ups of a pair are driven once a sequence, so the coverage costs the fewest requests.
 */
const SEQUENCES_FOR_COVERAGE = 8;
const SPARSE = BUDGETED && SEQUENCES < SEQUENCES_FOR_COVERAGE;
/** Random commands of a sparse budget's sequence, before its tour: the tour's requests are the coverage. */
const SPARSE_COMMANDS = 10;
/** The stateful sequences ran their whole budget without a failure: the coverage check judges them. */
let completed = false;

interface Model {
  /** agents of the account before the sequence (another run's, a deployment's own): listed, never touched */
  baseline: Agent[];
  /**
   * every agent the sequence made, in order; a deleted one stays, marked; `updatedAtMoved`: the
   * service set status error since the model last read its updatedAt (expectRecord)
   */
  agents: Array<ModelAgent & { deleted: boolean; updatedAtMoved?: boolean }>;
  conversations: ConversationModel;
  /** the status transitions this sequence took, by `from>to`: what a model-guided command steers by */
  reached: Record<string, number>;
  /** bios the sequence wrote so far: each new one differs from every earlier one */
  notes: number;
  /** the pairs whose follow-ups this sequence drove: on a sparse budget, once a pair (Step) */
  followed: Set<string>;
}
/** The target: only the ids it made, in the model's order. */
interface Real {
  ids: string[];
}

type Cmd = fc.AsyncCommand<Model, Real>;

/**
 * The record equals the model's. After the service itself changed the agent (a model failure
 * sets status error, PROFILE §5), the model does not know its updatedAt: PROFILE §4 has it change
 * "on every update that changes something", and the service's own change is no update (no PATCH),
 * so a service may move it or leave it. The model takes the target's value, which must not go back.
 */
function expectRecord(actual: Agent, agent: Model["agents"][number]): void {
  if (agent.updatedAtMoved) {
    expect(Date.parse(actual.updatedAt), "updatedAt never goes back when the service sets status error").toBeGreaterThanOrEqual(
      Date.parse(agent.updatedAt),
    );
    agent.updatedAt = actual.updatedAt;
    agent.updatedAtMoved = false;
  }
  expectEqual(actual, recordOf(agent));
}

/**
 * A deployment's own model may fail any message (PROFILE §5: 500 MODEL_ERROR, or the stream's error
 * event, and the agent is then in error); only a reference-compatible target says when (§10's
 * mock-error). Elsewhere the model follows such a failure as it follows mock-error's.
 */
const deploymentModelFailed = (code: string | undefined) => {
  const failed = !target.referenceFaults && code === "MODEL_ERROR";
  if (failed) replies.failedByDeployment++;
  return failed;
};
/** Replies the sequences judged, and messages a deployment's model failed: none of the first, and the message clauses judged nothing. */
const replies = { judged: 0, failedByDeployment: 0 };

const said = (res: ApiResult<unknown>) =>
  `${res.exchange.request.method} ${res.exchange.request.url} → ${res.status} ${res.error?.code ?? ""}`;
const live = (m: Model) => m.agents.filter((a) => !a.deleted);
const statusOf = (agent: ModelAgent): AgentStatus => AGENT_STATUSES.find((s) => s === agent.config.status) ?? "active";
/** Count a command that reads or acts on an agent, by the agent's status: every endpoint on every status. */
const onStatus = (command: string, agent: Model["agents"][number]) =>
  tally(`stateful.on-${agent.deleted ? "deleted" : statusOf(agent)}.${command}`);
/** PROFILE §4 sets no rule on names: two agents may share one, and a deleted agent's name may come back. */
function tallyNameCollision(m: Readonly<Model>, name: unknown, self?: string): void {
  const holders = m.agents.filter((a) => a.id !== self && a.config.name === name);
  if (holders.some((a) => !a.deleted)) tally("stateful.collision.name-of-live-agent");
  else if (holders.length) tally("stateful.collision.name-of-deleted-agent");
}
/** A transition the sequence took: into the run's table and the sequence's own counts. */
function took(m: Model, from: TransitionFrom, to: TransitionTo): void {
  transition(from, to);
  m.reached[transitionKey(from, to)] = (m.reached[transitionKey(from, to)] ?? 0) + 1;
}
const pick = <T>(items: readonly T[], index: number): T | undefined => (items.length ? items[index % items.length] : undefined);

function expectAnswer(res: ApiResult<unknown>, status: number, code?: string): void {
  expectEqual(
    { status: res.status, code: res.error?.code, parseIssues: res.parseIssues },
    { status, code, parseIssues: [] },
    () => said(res),
  );
}

/**
 * An agent the target made is the sequence's to delete at its end, whatever its answer is judged:
 * one left behind (a 201 whose body breaks its schema, a burst's later creates after an earlier
 * one failed) would sit in every later sequence's lists as if another client had made it.
 */
function madeBy(r: Real, res: ApiResult<unknown>): void {
  const id = res.status === 201 && isRecord(res.data) ? res.data.id : undefined;
  if (typeof id === "string" && !r.ids.includes(id)) r.ids.push(id);
}

/** A create's answer against the model's prediction; a made agent joins the model. */
function adoptCreated(m: Model, r: Real, res: ApiResult<unknown>, predicted: ReturnType<typeof predictCreate>): void {
  madeBy(r, res);
  if (!predicted.ok) {
    expectAnswer(res, 400, "INVALID_REQUEST"); // a 201 made one: deleted at the end, then reported
    return;
  }
  expectAnswer(res, 201);
  const agent = res.data as Agent;
  const made = {
    id: agent.id,
    config: predicted.value,
    createdAt: agent.createdAt,
    updatedAt: agent.updatedAt,
    deleted: false,
  };
  m.agents.push(made);
  expectEqual(agent, recordOf(made));
  took(m, "new", statusOf(made));
}

class Create implements Cmd {
  constructor(
    readonly body: JsonObject,
    readonly label: string,
    readonly invalidField?: string,
  ) {}
  check = (m: Readonly<Model>) => live(m).length < 3;
  async run(m: Model, r: Real) {
    tally(`stateful.create.${this.label}`);
    if (this.invalidField === undefined) tallyNameCollision(m, this.body.name);
    rememberTokens(this.body);
    const res = await nextClient().call("createAgent", { body: this.body });
    adoptCreated(
      m,
      r,
      res,
      this.invalidField === undefined ? predictCreate(this.body) : { ok: false as const, field: this.invalidField },
    );
  }
  toString = () => `create(${JSON.stringify(this.body)})`;
}

/**
 * Creates sent at once, so they land in the same millisecond: createdAt ties, and the lists
 * that follow must break them by id in the order's direction (PROFILE §5 List).
 */
class CreateBurst implements Cmd {
  constructor(readonly bodies: readonly JsonObject[]) {}
  check = (m: Readonly<Model>) => live(m).length + this.bodies.length <= 3;
  async run(m: Model, r: Real) {
    tally("stateful.create.burst");
    for (const body of this.bodies) {
      tallyNameCollision(m, body.name);
      rememberTokens(body);
    }
    const answers = await Promise.all(this.bodies.map((body) => nextClient().call("createAgent", { body })));
    for (const res of answers) madeBy(r, res);
    for (const [i, res] of answers.entries()) adoptCreated(m, r, res, predictCreate(this.bodies[i]!));
    const made = m.agents.slice(-this.bodies.length);
    if (made.every((a) => a.createdAt === made[0]!.createdAt)) tally("stateful.create.burst-tied");
  }
  toString = () => `burst(${this.bodies.map((b) => `create(${JSON.stringify(b)})`).join(", ")})`;
}

class Get implements Cmd {
  constructor(readonly index: number) {}
  check = (m: Readonly<Model>) => m.agents.length > 0;
  async run(m: Model) {
    const agent = pick(m.agents, this.index)!;
    tally(agent.deleted ? "stateful.get-after-delete" : "stateful.get");
    onStatus("get", agent);
    const res = await nextClient().getAgent(agent.id);
    if (agent.deleted) return expectAnswer(res, 404, "AGENT_NOT_FOUND");
    expectAnswer(res, 200);
    expectRecord(res.data as Agent, agent);
  }
  toString = () => `get(#${this.index})`;
}

class List implements Cmd {
  constructor(readonly query: Record<string, string | string[]>) {}
  check = () => true;
  async run(m: Model) {
    tally("stateful.list");
    const status = this.query.status;
    if (typeof status === "string") for (const agent of live(m)) if (statusOf(agent) === status) onStatus("list-filtered", agent);
    const res = await nextClient().listAgents(this.query);
    expectAnswer(res, 200);
    const records = [...m.baseline, ...live(m).map(recordOf)];
    const q = readListQuery(this.query);
    const expected = predictList(records, q);
    // another client in the account never makes a finding: then only this run's agents are judged
    const order = predictList(records, { ...q, page: 1, limit: Number.MAX_SAFE_INTEGER }).ids;
    const again = askAgain(this.query);
    // held to as expectRecord holds them: an agent the service set in error has any later updatedAt
    const listed = new Map(res.data!.map((a) => [a.id, a]));
    const own = live(m).map((agent) => {
      const predicted = recordOf(agent);
      const seen = listed.get(agent.id);
      return agent.updatedAtMoved && seen && Date.parse(seen.updatedAt) >= Date.parse(agent.updatedAt)
        ? { ...predicted, updatedAt: seen.updatedAt }
        : predicted;
    });
    await judgeList(
      res.data!,
      { baseline: m.baseline, own, order },
      () => {
        expectEqual({ ids: res.data!.map((a) => a.id), pagination: res.pagination }, expected, () => said(res));
        for (const item of res.data!) {
          const mine = m.agents.find((a) => a.id === item.id);
          if (mine) expectRecord(item, mine);
          else
            expectEqual(
              item,
              m.baseline.find((a) => a.id === item.id),
            );
        }
      },
      { total: res.pagination?.total ?? 0, again },
    );
  }
  toString = () => `list(${new URLSearchParams(this.query as Record<string, string>).toString()})`;
}

class Patch implements Cmd {
  constructor(
    readonly index: number,
    readonly patch: JsonObject,
    readonly label: string,
    readonly invalidField?: string,
  ) {}
  check = (m: Readonly<Model>) => m.agents.length > 0;
  async run(m: Model) {
    const agent = pick(m.agents, this.index)!;
    tally(`stateful.patch.${this.label}${agent.deleted ? "-after-delete" : ""}`);
    onStatus(this.patch.status === undefined ? "patch-without-status" : "patch-status", agent);
    if (this.invalidField === undefined && this.patch.name !== undefined) tallyNameCollision(m, this.patch.name, agent.id);
    rememberTokens(this.patch);
    const res = await nextClient().call("updateAgent", { agentId: agent.id, body: this.patch });
    if (agent.deleted) {
      // a body invalid on its own face and a gone agent: PROFILE §3, "any applicable error is
      // conformant" (a service may read the body before it looks the agent up)
      if (this.invalidField !== undefined && res.status === 400) return expectAnswer(res, 400, "INVALID_REQUEST");
      return expectAnswer(res, 404, "AGENT_NOT_FOUND");
    }
    const predicted =
      this.invalidField === undefined
        ? predictUpdate(agent.config, this.patch)
        : { ok: false as const, field: this.invalidField };
    if (!predicted.ok) return expectAnswer(res, 400, "INVALID_REQUEST");
    expectAnswer(res, 200);
    const record = res.data as Agent;
    if (predicted.value.changed) {
      expect(record.updatedAt, "PROFILE §4: updatedAt changes on an update that changes something").not.toBe(agent.updatedAt);
      expect(Date.parse(record.updatedAt)).toBeGreaterThanOrEqual(Date.parse(agent.updatedAt));
      agent.updatedAt = record.updatedAt;
      agent.updatedAtMoved = false;
    }
    const from = statusOf(agent);
    agent.config = predicted.value.config;
    expectRecord(record, agent);
    took(m, from, statusOf(agent));
  }
  toString = () => `patch(#${this.index}, ${JSON.stringify(this.patch)})`;
}

class Delete implements Cmd {
  constructor(readonly index: number) {}
  check = (m: Readonly<Model>) => m.agents.length > 0;
  async run(m: Model) {
    const agent = pick(m.agents, this.index)!;
    tally(agent.deleted ? "stateful.delete-after-delete" : "stateful.delete");
    onStatus("delete", agent);
    const res = await nextClient().deleteAgent(agent.id);
    if (agent.deleted) return expectAnswer(res, 404, "AGENT_NOT_FOUND");
    expectAnswer(res, 200);
    expectEqual(res.data, { id: agent.id, deleted: true });
    agent.deleted = true;
    m.conversations.forgetAgent(agent.id);
    took(m, statusOf(agent), "deleted");
  }
  toString = () => `delete(#${this.index})`;
}

class Send implements Cmd {
  constructor(
    readonly index: number,
    readonly text: string,
    readonly userId: string | undefined,
    readonly roomId: string | undefined,
    readonly stream: boolean,
  ) {}
  check = (m: Readonly<Model>) => m.agents.length > 0;
  async run(m: Model) {
    const agent = pick(m.agents, this.index)!;
    const body = {
      text: this.text,
      ...(this.userId ? { userId: this.userId } : {}),
      ...(this.roomId ? { roomId: this.roomId } : {}),
    };
    const status = statusOf(agent);
    onStatus(this.stream ? "stream" : "send", agent);
    if (!agent.deleted && status !== "active") took(m, status, status);
    const failing = target.referenceFaults && (agent.config.modelSettings as { model?: string }).model === FAILING_MODEL;
    tally(
      `stateful.send${this.stream ? ".stream" : ""}${agent.deleted ? "-after-delete" : status !== "active" ? `-${status}` : failing ? "-model-error" : ""}`,
    );
    const client = nextClient();
    const key = ConversationModel.key(agent.id, this.userId, this.roomId);
    let reply: MessageReply | undefined;
    if (this.stream) {
      const res = await client.streamMessage(agent.id, body);
      if (agent.deleted)
        return expectEqual({ status: res.status, code: res.error?.code }, { status: 404, code: "AGENT_NOT_FOUND" });
      if (status !== "active")
        return expectEqual({ status: res.status, code: res.error?.code }, { status: 503, code: "AGENT_UNAVAILABLE" });
      unlessBudgetEnded(res, "a streamed message to an active agent");
      expect(res.status, said(res as never)).toBe(200);
      if (failing || deploymentModelFailed(res.error?.code)) {
        if (!failing) tally("stateful.send.stream-deployment-model-error");
        expect(res.error?.code, "PROFILE §5: a model failure after the stream opened is an error event").toBe("MODEL_ERROR");
        agent.config.status = "error";
        agent.updatedAtMoved = true;
        took(m, "active", "error");
        return;
      }
      expect(res.parseIssues).toEqual([]);
      reply = res.done;
    } else {
      const res = await client.sendMessage(agent.id, body);
      if (agent.deleted) return expectAnswer(res, 404, "AGENT_NOT_FOUND");
      if (status !== "active") return expectAnswer(res, 503, "AGENT_UNAVAILABLE");
      unlessBudgetEnded(res, "a message to an active agent");
      if (failing || (res.status === 500 && deploymentModelFailed(res.error?.code))) {
        if (!failing) tally("stateful.send-deployment-model-error");
        expectAnswer(res, 500, "MODEL_ERROR");
        agent.config.status = "error";
        agent.updatedAtMoved = true;
        took(m, "active", "error");
        return;
      }
      expectAnswer(res, 200);
      reply = res.data;
    }
    expect(reply, "a reply").toBeDefined();
    expectEqual(
      { turn: reply!.turn, agentId: reply!.agentId, userId: reply!.userId, roomId: reply!.roomId },
      {
        turn: m.conversations.nextTurn(key),
        agentId: agent.id,
        userId: this.userId ?? null,
        roomId: this.roomId ?? null,
      },
    );
    const expectedId = m.conversations.expectedId(key);
    if (expectedId !== undefined)
      expect(reply!.conversationId, "PROFILE §5: same (agent, userId, roomId), same conversation").toBe(expectedId);
    else expect(m.conversations.ownerOf(reply!.conversationId), "PROFILE §5: a new conversation has a new id").toBeUndefined();
    m.conversations.completed(key, reply!.conversationId);
    replies.judged++;
    took(m, "active", "active");
  }
  toString = () =>
    `send(#${this.index}, ${JSON.stringify({ text: this.text, userId: this.userId, roomId: this.roomId, stream: this.stream })})`;
}

/**
 * A name taken from another agent of the sequence, live or deleted: a collision by construction
 * (PROFILE §4 sets no rule against two agents sharing a name, nor against a name coming back).
 */
class CopyName implements Cmd {
  constructor(
    readonly index: number,
    readonly from: number,
    readonly create: boolean,
  ) {}
  check = (m: Readonly<Model>) => m.agents.length > 0 && (!this.create || live(m).length < 3);
  run(m: Model, r: Real) {
    const name = pick(m.agents, this.from)!.config.name;
    if (typeof name !== "string") throw new Error("the model holds an agent without a name");
    return this.create ? new Create({ name }, "copied-name").run(m, r) : new Patch(this.index, { name }, "copied-name").run(m);
  }
  toString = () =>
    this.create ? `create({name: name of #${this.from}})` : `patch(#${this.index}, {name: name of #${this.from}})`;
}

/**
 * The pairs a command can drive an agent along on this target: into error only through the
 * failing model of a reference-compatible target (PROFILE §10), so elsewhere no pair through it.
 */
const DRIVABLE = STATUS_TRANSITIONS.filter((t) => target.referenceFaults || (t.from !== "error" && t.to !== "error"));
const modelOf = (agent: ModelAgent) => (agent.config.modelSettings as { model?: string } | undefined)?.model;
/** A bio no earlier write of the sequence sent: a patch with it changes something. */
const nextNote = (m: Model) => ({ bio: `note ${++m.notes}` });

/**
 * Model-guided: drive one agent along the allowed pair this sequence has taken least (ties by
 * the table's order from `offset`), first bringing it to the pair's start by the shortest road.
 * So every sequence spreads over every road, those out of error and inactive included, which a
 * random command reaches only after an unlikely run of the right ones. It steers by the
 * sequence's own counts, never the run's, so a shrunk sequence replays the same roads.
 */
class Reach implements Cmd {
  /** the agent it drove, for the operations that follow (Step) */
  driven?: Model["agents"][number];
  constructor(
    readonly index: number,
    readonly offset: number,
    readonly name: string,
    /** drive an agent already at the pair's start when there is one: the fewest requests (the tour) */
    readonly cheapest = false,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const agents = live(m);
    const pair = leastReachedPair(
      m.reached,
      this.offset,
      DRIVABLE.filter((t) => (t.from === "new" ? agents.length < 3 : agents.length > 0)),
    );
    if (!pair) return;
    tally(`stateful.reach.${pair.from}>${pair.to}`);
    if (pair.from === "new") {
      const made = m.agents.length;
      await new Create({ name: this.name, ...(pair.to === "inactive" ? { status: "inactive" } : {}) }, "reach").run(m, r);
      this.driven = m.agents[made];
      return;
    }
    const agent = (this.cheapest ? agents.find((a) => statusOf(a) === pair.from) : undefined) ?? pick(agents, this.index)!;
    const i = m.agents.indexOf(agent);
    this.driven = agent;
    // a history to keep first: a working agent that holds no conversation yet answers one message,
    // so the message after the transition shows whether its turns and conversationId survived
    const working = statusOf(agent) === "active" && modelOf(agent) !== FAILING_MODEL;
    if (working && m.conversations.conversationsOf(agent.id).length === 0)
      await new Send(i, TEXT_POOL[0]!, "u1", undefined, false).run(m);
    if (statusOf(agent) !== pair.from) await this.bringTo(m, i, pair.from);
    if (pair.to === pair.from) {
      // the same status again: a patch without status (in error, the one that repairs the model)
      const repair = pair.from === "error" && modelOf(agent) === FAILING_MODEL;
      return new Patch(
        i,
        repair ? { modelSettings: { model: AGENT_DEFAULTS.modelSettings.model } } : nextNote(m),
        repair ? "reach-repair-model" : "reach-same-status",
      ).run(m);
    }
    if (pair.to === "deleted") return new Delete(i).run(m);
    if (pair.to === "error") return this.intoError(m, i);
    // back to active from error, the model repaired in the same patch: the message after it then
    // answers, and shows whether the conversations the agent held survived the road
    const repair = pair.from === "error" && pair.to === "active" && modelOf(agent) === FAILING_MODEL;
    return new Patch(
      i,
      { status: pair.to, ...(repair ? { modelSettings: { model: AGENT_DEFAULTS.modelSettings.model } } : {}) },
      "reach-status",
    ).run(m);
  }
  private async bringTo(m: Model, i: number, status: AgentStatus): Promise<void> {
    if (status !== "error") return new Patch(i, { status }, "reach-status").run(m);
    if (statusOf(m.agents[i]!) === "inactive") await new Patch(i, { status: "active" }, "reach-status").run(m);
    return this.intoError(m, i);
  }
  /** PROFILE §5, §10: a message to the failing model fails and turns the agent error. */
  private async intoError(m: Model, i: number): Promise<void> {
    if (modelOf(m.agents[i]!) !== FAILING_MODEL)
      await new Patch(i, { modelSettings: { model: FAILING_MODEL } }, "reach-break-model").run(m);
    await new Send(i, TEXT_POOL[0]!, undefined, undefined, false).run(m);
  }
  toString = () =>
    `reach(${this.cheapest ? "an agent at the pair's start, else " : ""}#${this.index}, toward the pair least taken from ${this.offset}, name ${JSON.stringify(this.name)})`;
}

/** Where an agent stands: its status, or deleted. */
const standing = (agent: Model["agents"][number]) => (agent.deleted ? "deleted" : statusOf(agent));

/**
 * After a transition, the operations whose answers depend on history, each against the model:
 * a GET, a list filtered by the status it reached, a patch without status and the same patch
 * again (PROFILE §5: the second changes nothing, updatedAt stays), and a message in a
 * conversation the agent already holds (turn and conversationId carry on; 503 while not active).
 * A deleted agent: the GET, the list and the message answer as for a gone agent, one patch 404.
 */
function followUps(m: Model, agent: Model["agents"][number]): Cmd[] {
  const i = m.agents.indexOf(agent);
  const conversation = m.conversations.conversationsOf(agent.id)[0] ?? { userId: "u1", roomId: undefined };
  const send = new Send(i, TEXT_POOL[1 % TEXT_POOL.length]!, conversation.userId, conversation.roomId, false);
  const listed = new List({ status: statusOf(agent), limit: "100", sortBy: "createdAt", order: "desc" });
  const note = nextNote(m);
  if (agent.deleted) return [new Get(i), listed, new Patch(i, note, "after-transition"), send];
  return [new Get(i), listed, new Patch(i, note, "after-transition"), new Patch(i, note, "after-transition-again"), send];
}

/**
 * Each step, then the invariants over the run's whole history (src/model/history.ts); after a
 * step that moved an agent to another status (or a model-guided one), the follow-ups.
 */
class Step implements Cmd {
  constructor(readonly command: Cmd) {}
  check = (m: Readonly<Model>) => this.command.check(m);
  async run(m: Model, r: Real) {
    const before = new Map(m.agents.map((a) => [a, standing(a)]));
    await this.command.run(m, r);
    expectHistoryKept();
    const moved = m.agents.filter((a) => before.has(a) && before.get(a) !== standing(a));
    const driven = this.command instanceof Reach ? this.command.driven : undefined;
    if (driven && !moved.includes(driven)) moved.push(driven);
    for (const agent of moved) {
      const pair = `${before.get(agent) ?? "new"}>${standing(agent)}`;
      if (SPARSE && m.followed.has(pair)) continue;
      m.followed.add(pair);
      tally(`stateful.after-transition.${standing(agent)}`);
      for (const command of followUps(m, agent)) {
        await command.run(m, r);
        expectHistoryKept();
      }
    }
  }
  toString = () => String(this.command);
}

// few agents, few users: histories meet on the same agent and conversation
const index = fc.nat({ max: 2 });
const createValid = validCreateBody(bodyOptions).map((g) => new Create(g.value as JsonObject, "valid"));
const statusPatch = fc
  .tuple(index, fc.constantFrom("active", "inactive"))
  .map(([i, status]) => new Patch(i, { status }, "status"));
const send = fc
  .tuple(
    index,
    fc.constantFrom(...TEXT_POOL),
    fc.constantFrom(undefined, "u1", "u2"),
    fc.constantFrom(undefined, undefined, "r1"),
    fc.boolean(),
  )
  .map(([i, text, u, r, s]) => new Send(i, text, u, r, s));
/** Listings that look at names and statuses, where a stale index or a misplaced filter shows. */
const list = fc
  .oneof(
    validListQuery().map((q) => q.value),
    fc.record({
      sortBy: fc.constantFrom("name", "status"),
      order: fc.constantFrom("asc", "desc"),
      limit: fc.constantFrom("1", "2", "100"),
    }),
    // every status, error included, as a filter: an agent on each road shows where it must
    fc.record(
      {
        status: fc.constantFrom(...AGENT_STATUSES),
        sortBy: fc.constantFrom(...SORT_FIELDS),
        order: fc.constantFrom(...SORT_ORDERS),
        limit: fc.constantFrom("1", "2", "100"),
      },
      { requiredKeys: ["status"] },
    ),
  )
  .map((q) => new List(q));
/**
 * Into error and back to a working model (PROFILE §10): on a reference-compatible target the
 * model `mock-error` makes the next message fail and the agent turn error; a patch of the model
 * without status is a road that must keep error (§5 Update, §8).
 */
const modelPatch = (label: string, model: string) => index.map((i) => new Patch(i, { modelSettings: { model } }, label));
const intoError = target.referenceFaults
  ? [modelPatch("break-model", FAILING_MODEL), modelPatch("break-model", FAILING_MODEL)]
  : [];
const repair = target.referenceFaults ? [modelPatch("repair-model", AGENT_DEFAULTS.modelSettings.model)] : [];
const burst = fc
  .array(
    validCreateBody(bodyOptions).map((g) => g.value as JsonObject),
    { minLength: 2, maxLength: 3 },
  )
  .map((bodies) => new CreateBurst(bodies));
const reach = fc
  .tuple(index, fc.nat({ max: STATUS_TRANSITIONS.length - 1 }), agentName(bodyOptions))
  .map(([i, offset, name]) => new Reach(i, offset, name));
/**
 * How many of the command slots are model-guided. On a deployment the budget is requests, and a
 * model-guided command reaches a pair in a few of them where random ones need a lucky run: there
 * the commands lean on it, so every pair is reached 3 times within the default budget.
 */
const REACH_SLOTS = BUDGETED ? 12 : 4;
const commands = [
  ...Array.from({ length: REACH_SLOTS }, () => reach),
  createValid,
  createValid,
  burst,
  ...intoError,
  ...repair,
  invalidBody(
    "create",
    validCreateBody(bodyOptions).map((g) => g.value as JsonObject),
  ).map((i) => new Create("raw" in i.body ? { name: 1 } : (i.body as JsonObject), "invalid", i.field ?? "(body)")),
  index.map((i) => new Get(i)),
  list,
  fc.tuple(index, validPatch(bodyOptions)).map(([i, p]) => new Patch(i, p.value as JsonObject, p.generator)),
  fc.tuple(index, agentName(bodyOptions)).map(([i, name]) => new Patch(i, { name }, "rename")),
  fc.tuple(index, index, fc.boolean()).map(([i, from, create]) => new CopyName(i, from, create)),
  statusPatch,
  statusPatch,
  statusPatch,
  statusPatch,
  fc
    .tuple(
      index,
      invalidBody(
        "update",
        validPatch(bodyOptions).map((g) => g.value as JsonObject),
      ),
    )
    .filter(([, i]) => !("raw" in i.body))
    .map(([i, p]) => new Patch(i, p.body as JsonObject, "invalid", p.field ?? "(body)")),
  index.map((i) => new Delete(i)),
  send,
  send,
  send,
  send,
];

/**
 * A paced run's tour: after its random commands, each sequence drives the pairs it took fewer
 * times than its share of the minimum (all of it when the budget affords one sequence) by
 * model-guided steps on the cheapest road, the follow-ups after each as ever (once a pair on a
 * sparse budget). The shares of the sequences add up to the minimum, so a run that spends its
 * budget takes every pair 3 times. Bounded: each step takes one pair, so every share is met well
 * before this many.
 */
const TOUR_STEPS = 2 * MIN_PER_PAIR * STATUS_TRANSITIONS.length;
async function tour(m: Model, r: Real): Promise<void> {
  const perSequence = Math.ceil(MIN_PER_PAIR / SEQUENCES);
  for (let step = 0; step < TOUR_STEPS; step++) {
    if (DRIVABLE.every((t) => (m.reached[transitionKey(t.from, t.to)] ?? 0) >= perSequence)) return;
    tally("stateful.tour-step");
    await new Step(new Reach(step, 0, `${bodyOptions.namePrefix}tour`, true)).run(m, r);
  }
}

describe("property: stateful", () => {
  check(
    [
      "update.merge-patch",
      "update.noop",
      "list.order",
      "list.filter",
      "delete.gone",
      "message.conversation",
      "message.turn",
      "status.lifecycle",
      "message.model-error",
    ],
    "stateful: random sequences of calls answer as the model does, step by step",
    async ({ skip }) => {
      skipUnlessReplayed("stateful", skip);
      const baseline = await listAccount(firstClient());
      const ran = await runProperty({
        title: "stateful",
        sequences: true,
        numRuns: SEQUENCES,
        property: (replayPath) =>
          fc.asyncProperty(
            fc.commands(
              commands.map((c) => c.map((command): Cmd => new Step(command))),
              { maxCommands: SPARSE ? SPARSE_COMMANDS : 30, size: "max", ...(replayPath ? { replayPath } : {}) },
            ),
            async (cmds) => {
              const model: Model = {
                baseline,
                agents: [],
                conversations: new ConversationModel(),
                reached: {},
                notes: 0,
                followed: new Set(),
              };
              const real: Real = { ids: [] };
              try {
                await fc.asyncModelRun(() => ({ model, real }), cmds);
                if (BUDGETED) await tour(model, real);
              } finally {
                // each sequence starts from the same account: what it made goes
                for (const agent of model.agents) if (!agent.deleted) await nextClient().deleteAgent(agent.id);
                for (const id of real.ids) if (!model.agents.some((a) => a.id === id)) await nextClient().deleteAgent(id);
              }
            },
          ),
      });
      expect(ran, "cases run").toBeGreaterThan(0);
      // the check cites the message clauses: with every reply failed by the deployment's model, they judged nothing
      if (replies.judged === 0 && replies.failedByDeployment > 0)
        throw new Inconclusive(
          `${MODEL_FAILED} every message the stateful sequences sent (${replies.failedByDeployment}, MODEL_ERROR): no reply to judge conversations and turns by`,
        );
      completed = true;
    },
  );

  check(
    ["status.lifecycle", "update.status", "delete.gone", "message.model-error"],
    `stateful: every allowed status transition was taken at least ${MIN_PER_PAIR} times`,
    ({ skip }) => {
      skipUnlessReplayed("stateful", skip);
      const outcome = outcomeOf("stateful");
      if (!outcome) return skip("the stateful sequences did not run");
      // a failed sequence ends the run early: its finding is the stateful check's, and the roads it missed say nothing
      // (so with a run the time limit ended: the stateful check says so, inconclusive)
      if (!completed)
        return skip("the stateful sequences did not end as planned (the check above says why): what they reached is not judged");
      const counts = outcome.transitions ?? {};
      const short = pairsBelowMinimum(counts, DRIVABLE).map(describeShortfall);
      if (short.length && target.property?.maxRequests !== undefined)
        return skip(`--max-requests ${target.property.maxRequests} left pairs below ${MIN_PER_PAIR}: ${short.join("; ")}`);
      // a starved machine: the time limit (support.ts) ended the run before its budget was spent
      if (short.length && outcome.sequences < SEQUENCES)
        return skip(`the time limit ended the run after ${outcome.sequences} of ${SEQUENCES} sequences: ${short.join("; ")}`);
      if (short.length)
        throw new HarnessError(
          `the stateful sequences left ${short.length} allowed pair(s) below ${MIN_PER_PAIR} in the default budget: ${short.join("; ")}`,
        );
      const undrivable = pairsBelowMinimum(counts).filter((t) => !DRIVABLE.some((d) => d.from === t.from && d.to === t.to));
      if (undrivable.length)
        return skip(
          `error is reached only through the failing model of a reference-compatible target (PROFILE §10; --reference-faults): ${undrivable.map(describeShortfall).join("; ")}`,
        );
      expect(pairsBelowMinimum(counts)).toEqual([]);
    },
  );
});
