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
import { declareFile } from "../support/declare-file.js";
import { check, expect, target } from "../support/harness.js";
import {
  expectHistoryKept,
  firstClient,
  listAccount,
  nextClient,
  rememberTokens,
  runProperty,
  runsFor,
  skipUnlessReplayed,
  tally,
  transition,
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

interface Model {
  /** agents of the account before the sequence (another run's, a deployment's own): listed, never touched */
  baseline: Agent[];
  /** every agent the sequence made, in order; a deleted one stays, marked */
  agents: Array<ModelAgent & { deleted: boolean; updatedAtMoved?: boolean }>;
  conversations: ConversationModel;
}
/** The target: only the ids it made, in the model's order. */
interface Real {
  ids: string[];
}

type Cmd = fc.AsyncCommand<Model, Real>;

/**
 * The record equals the model's. After the service itself changed the agent (a model failure
 * sets status error, PROFILE §5), the model knows updatedAt moved but not to what: it takes
 * the target's value once it is later than the one it knew.
 */
function expectRecord(actual: Agent, agent: Model["agents"][number]): void {
  if (agent.updatedAtMoved) {
    expect(Date.parse(actual.updatedAt), "updatedAt moves when the service sets status error").toBeGreaterThan(
      Date.parse(agent.updatedAt),
    );
    agent.updatedAt = actual.updatedAt;
    agent.updatedAtMoved = false;
  }
  expect(actual).toEqual(recordOf(agent));
}

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
const pick = <T>(items: readonly T[], index: number): T | undefined => (items.length ? items[index % items.length] : undefined);

function expectAnswer(res: ApiResult<unknown>, status: number, code?: string): void {
  expect({ status: res.status, code: res.error?.code, parseIssues: res.parseIssues }, said(res)).toEqual({
    status,
    code,
    parseIssues: [],
  });
}

/** A create's answer against the model's prediction; a made agent joins the model. */
function adoptCreated(m: Model, r: Real, res: ApiResult<unknown>, predicted: ReturnType<typeof predictCreate>): void {
  if (!predicted.ok) {
    if (res.status === 201) r.ids.push(String((res.data as Agent).id)); // cleaned up, then reported
    expectAnswer(res, 400, "INVALID_REQUEST");
    return;
  }
  expectAnswer(res, 201);
  const agent = res.data as Agent;
  r.ids.push(agent.id);
  const made = {
    id: agent.id,
    config: predicted.value,
    createdAt: agent.createdAt,
    updatedAt: agent.updatedAt,
    deleted: false,
  };
  m.agents.push(made);
  expect(agent).toEqual(recordOf(made));
  transition("new", statusOf(made));
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
    const expected = predictList(records, readListQuery(this.query));
    expect({ ids: res.data!.map((a) => a.id), pagination: res.pagination }, said(res)).toEqual(expected);
    for (const item of res.data!) {
      const mine = m.agents.find((a) => a.id === item.id);
      if (mine) expectRecord(item, mine);
      else expect(item).toEqual(m.baseline.find((a) => a.id === item.id));
    }
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
    if (agent.deleted) return expectAnswer(res, 404, "AGENT_NOT_FOUND");
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
    transition(from, statusOf(agent));
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
    expect(res.data).toEqual({ id: agent.id, deleted: true });
    agent.deleted = true;
    m.conversations.forgetAgent(agent.id);
    transition(statusOf(agent), "deleted");
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
    if (!agent.deleted && status !== "active") transition(status, status);
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
        return expect({ status: res.status, code: res.error?.code }).toEqual({ status: 404, code: "AGENT_NOT_FOUND" });
      if (status !== "active")
        return expect({ status: res.status, code: res.error?.code }).toEqual({ status: 503, code: "AGENT_UNAVAILABLE" });
      expect(res.status, said(res as never)).toBe(200);
      if (failing) {
        expect(res.error?.code, "PROFILE §5: a model failure after the stream opened is an error event").toBe("MODEL_ERROR");
        agent.config.status = "error";
        agent.updatedAtMoved = true;
        transition("active", "error");
        return;
      }
      expect(res.parseIssues).toEqual([]);
      reply = res.done;
    } else {
      const res = await client.sendMessage(agent.id, body);
      if (agent.deleted) return expectAnswer(res, 404, "AGENT_NOT_FOUND");
      if (status !== "active") return expectAnswer(res, 503, "AGENT_UNAVAILABLE");
      if (failing) {
        expectAnswer(res, 500, "MODEL_ERROR");
        agent.config.status = "error";
        agent.updatedAtMoved = true;
        transition("active", "error");
        return;
      }
      expectAnswer(res, 200);
      reply = res.data;
    }
    expect(reply, "a reply").toBeDefined();
    expect({ turn: reply!.turn, agentId: reply!.agentId, userId: reply!.userId, roomId: reply!.roomId }).toEqual({
      turn: m.conversations.nextTurn(key),
      agentId: agent.id,
      userId: this.userId ?? null,
      roomId: this.roomId ?? null,
    });
    const expectedId = m.conversations.expectedId(key);
    if (expectedId !== undefined)
      expect(reply!.conversationId, "PROFILE §5: same (agent, userId, roomId), same conversation").toBe(expectedId);
    else expect(m.conversations.ownerOf(reply!.conversationId), "PROFILE §5: a new conversation has a new id").toBeUndefined();
    m.conversations.completed(key, reply!.conversationId);
    transition("active", "active");
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

/** Each step, then the invariants over the run's whole history (src/model/history.ts). */
class Step implements Cmd {
  constructor(readonly command: Cmd) {}
  check = (m: Readonly<Model>) => this.command.check(m);
  async run(m: Model, r: Real) {
    await this.command.run(m, r);
    expectHistoryKept();
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
const commands = [
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
        numRuns: runsFor(200, { requests: 0.2, creates: 0.2 }, { requests: 30, creates: 3 }),
        property: (replayPath) =>
          fc.asyncProperty(
            fc.commands(
              commands.map((c) => c.map((command): Cmd => new Step(command))),
              { maxCommands: 40, size: "max", ...(replayPath ? { replayPath } : {}) },
            ),
            async (cmds) => {
              const model: Model = { baseline, agents: [], conversations: new ConversationModel() };
              const real: Real = { ids: [] };
              try {
                await fc.asyncModelRun(() => ({ model, real }), cmds);
              } finally {
                // each sequence starts from the same account: what it made goes
                for (const agent of model.agents) if (!agent.deleted) await nextClient().deleteAgent(agent.id);
                for (const id of real.ids) if (!model.agents.some((a) => a.id === id)) await nextClient().deleteAgent(id);
              }
            },
          ),
      });
      expect(ran, "cases run").toBeGreaterThan(0);
    },
  );
});
