import fc from "fast-check";
import { describe, vi } from "vitest";
import { agentName, FAILING_MODEL, invalidBody, validCreateBody, validPatch } from "../../src/arbitraries/bodies.js";
import { validListQuery } from "../../src/arbitraries/queries.js";
import type { ApiResult } from "../../src/client/index.js";
import type { Agent, MessageReply } from "../../src/contract/index.js";
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
import { check, expect, target } from "../support/harness.js";
import {
  firstClient,
  listAccount,
  nextClient,
  rememberTokens,
  runProperty,
  runsFor,
  skipUnlessReplayed,
  tally,
} from "./support.js";

/*
 * Random sequences of create, get, list, patch (status active ↔ inactive included),
 * delete, send message (stream or not) and reads after delete, against the target and the
 * model; after every step the target's answer must equal the model's (status, code, body).
 * This finds the bugs that need a history of calls before they show.
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
const pick = <T>(items: readonly T[], index: number): T | undefined => (items.length ? items[index % items.length] : undefined);

function expectAnswer(res: ApiResult<unknown>, status: number, code?: string): void {
  expect({ status: res.status, code: res.error?.code, parseIssues: res.parseIssues }, said(res)).toEqual({
    status,
    code,
    parseIssues: [],
  });
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
    rememberTokens(this.body);
    const res = await nextClient().call("createAgent", { body: this.body });
    const predicted =
      this.invalidField === undefined ? predictCreate(this.body) : { ok: false as const, field: this.invalidField };
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
  }
  toString = () => `create(${JSON.stringify(this.body)})`;
}

class Get implements Cmd {
  constructor(readonly index: number) {}
  check = (m: Readonly<Model>) => m.agents.length > 0;
  async run(m: Model) {
    const agent = pick(m.agents, this.index)!;
    tally(agent.deleted ? "stateful.get-after-delete" : "stateful.get");
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
    agent.config = predicted.value.config;
    expectRecord(record, agent);
  }
  toString = () => `patch(#${this.index}, ${JSON.stringify(this.patch)})`;
}

class Delete implements Cmd {
  constructor(readonly index: number) {}
  check = (m: Readonly<Model>) => m.agents.length > 0;
  async run(m: Model) {
    const agent = pick(m.agents, this.index)!;
    tally(agent.deleted ? "stateful.delete-after-delete" : "stateful.delete");
    const res = await nextClient().deleteAgent(agent.id);
    if (agent.deleted) return expectAnswer(res, 404, "AGENT_NOT_FOUND");
    expectAnswer(res, 200);
    expect(res.data).toEqual({ id: agent.id, deleted: true });
    agent.deleted = true;
    m.conversations.forgetAgent(agent.id);
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
    const status = agent.config.status;
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
  }
  toString = () =>
    `send(#${this.index}, ${JSON.stringify({ text: this.text, userId: this.userId, roomId: this.roomId, stream: this.stream })})`;
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
    fc.constantFrom("hello", "¿qué?", "😀 hi"),
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
  )
  .map((q) => new List(q));
const commands = [
  createValid,
  createValid,
  invalidBody(
    "create",
    validCreateBody(bodyOptions).map((g) => g.value as JsonObject),
  ).map((i) => new Create("raw" in i.body ? { name: 1 } : (i.body as JsonObject), "invalid", i.field ?? "(body)")),
  index.map((i) => new Get(i)),
  list,
  fc.tuple(index, validPatch(bodyOptions)).map(([i, p]) => new Patch(i, p.value as JsonObject, p.generator)),
  fc.tuple(index, agentName(bodyOptions)).map(([i, name]) => new Patch(i, { name }, "rename")),
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
            fc.commands(commands, { maxCommands: 40, size: "max", ...(replayPath ? { replayPath } : {}) }),
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
