import { afterAll, describe } from "vitest";
import type { ServiceClient } from "../../src/client/index.js";
import { budgetEndedWords, endedByTheBudget, MESSAGE_TIMING } from "../../src/contract/index.js";
import { declareFile } from "../support/declare-file.js";
import { loadBoundaries } from "../support/fixtures.js";
import type { AgentFactory } from "../support/harness.js";
import {
  check,
  clientFor,
  expect,
  expectError,
  expectInvalid,
  expectOk,
  HarnessError,
  smoke,
  target,
} from "../support/harness.js";

declareFile({ sendsMessages: true, sendsUnpaced: true });

/**
 * PROFILE §5 Send Message: body validation, the reply, conversations and turns, unknown and
 * unavailable agents; §10 determinism of the reference mock model.
 */

interface BodyRow {
  title: string;
  body: Record<string, unknown>;
  status: 200 | 400;
  fields?: string[];
}

const BODY_ROWS: BodyRow[] = [
  ...loadBoundaries<{ rows: BodyRow[] }>("send-message.json").rows,
  // PROFILE §5: roomId is 1–128 like userId (the shared fixture has no empty roomId row)
  { title: "empty roomId", body: { text: "hi", roomId: "" }, status: 400, fields: ["roomId"] },
];

const UNKNOWN_AGENT_ID = "agt_doesnotexist000";

describe("POST /agents/{agentId}/messages: the body", () => {
  // One agent serves every row: the table must not cost a create per row (PROFILE §7 Create 10 per window).
  let shared: string | undefined;
  const tableAgent = async (api: ServiceClient, agents: AgentFactory): Promise<string> => {
    if (shared === undefined) {
      const res = await api.createAgent({ name: agents.name("-table") });
      shared = expectOk(res, 201).id;
    }
    return shared;
  };
  afterAll(async () => {
    if (shared !== undefined) await clientFor(target.keys.main, "main").deleteAgent(shared);
  });

  for (const row of BODY_ROWS) {
    const outcome = row.status === 200 ? "200" : `400 (details, if any, naming ${(row.fields ?? []).join(", ")})`;
    check("message.body", `${row.title} → ${outcome}`, async ({ api, agents }) => {
      const agentId = await tableAgent(api, agents);
      const res = await api.call("sendMessage", { agentId, body: row.body });
      if (row.status === 200) {
        const reply = expectOk(res) as { agentId: string };
        expect(reply.agentId).toBe(agentId);
      } else {
        // PROFILE §5 asks a rejected message body for a 400, not for details naming the field
        expectInvalid(res, row.fields ?? [], "message.body");
      }
    });
  }
});

describe("POST /agents/{agentId}/messages: the reply", () => {
  smoke(
    "message.reply",
    "is {id msg_…, agentId, conversationId, turn, userId, roomId, text, createdAt}",
    async ({ api, agents }) => {
      const agent = await agents.create();
      const named = expectOk(await api.sendMessage(agent.id, { text: "hello", userId: "u-reply", roomId: "r-reply" }));
      expect(named).toMatchObject({ agentId: agent.id, userId: "u-reply", roomId: "r-reply", turn: 1 });
      expect(named.id).toMatch(/^msg_/);
      // PROFILE §5: userId and roomId read null when the message had none
      const anonymous = expectOk(await api.sendMessage(agent.id, { text: "hello" }));
      expect(anonymous).toMatchObject({ agentId: agent.id, userId: null, roomId: null, turn: 1 });
      expect(anonymous.id, "each reply has its own id").not.toBe(named.id);
    },
  );

  smoke("agent.not-found", "a message to an unknown agent → 404 AGENT_NOT_FOUND", async ({ api }) => {
    expectError(await api.sendMessage(UNKNOWN_AGENT_ID, { text: "hello" }), "AGENT_NOT_FOUND");
  });

  check(
    ["message.unavailable", "status.lifecycle"],
    "an inactive agent → 503 AGENT_UNAVAILABLE; active again it answers and keeps its conversations",
    async ({ api, agents }) => {
      const created = await agents.create({ status: "inactive" });
      expectError(await api.sendMessage(created.id, { text: "hello", userId: "u-status" }), "AGENT_UNAVAILABLE");
      expectOk(await api.updateAgent(created.id, { status: "active" }));
      const first = expectOk(await api.sendMessage(created.id, { text: "hello", userId: "u-status" }));
      expect(first.turn, "the 503 took no turn").toBe(1);

      expectOk(await api.updateAgent(created.id, { status: "inactive" }));
      expectError(await api.sendMessage(created.id, { text: "again", userId: "u-status" }), "AGENT_UNAVAILABLE");
      expectOk(await api.updateAgent(created.id, { status: "active" }));
      const second = expectOk(await api.sendMessage(created.id, { text: "again", userId: "u-status" }));
      // PROFILE §8: inactive keeps history
      expect({ conversationId: second.conversationId, turn: second.turn }).toEqual({
        conversationId: first.conversationId,
        turn: 2,
      });
    },
  );
});

describe("POST /agents/{agentId}/messages: conversations", () => {
  const PARTICIPANTS = [{ userId: "u-same" }, { roomId: "r-same" }, { userId: "u-same", roomId: "r-same" }];

  smoke(
    ["message.conversation", "message.turn"],
    "the same (agent, userId, roomId) continues one conversation with turns 1, 2, 3",
    async ({ api, agents }) => {
      const agent = await agents.create();
      const seen = new Set<string>();
      for (const who of PARTICIPANTS) {
        const replies = [];
        for (const text of ["one", "two", "three"]) replies.push(expectOk(await api.sendMessage(agent.id, { text, ...who })));
        const label = JSON.stringify(who);
        expect(
          replies.map((r) => r.turn),
          `${label}: turns`,
        ).toEqual([1, 2, 3]);
        expect(new Set(replies.map((r) => r.conversationId)).size, `${label}: one conversation`).toBe(1);
        expect(replies.map((r) => [r.userId, r.roomId])[0], `${label}: echoed`).toEqual([who.userId ?? null, who.roomId ?? null]);
        seen.add(replies[0]!.conversationId);
      }
      expect(seen.size, "userId only, roomId only, and both: three conversations").toBe(PARTICIPANTS.length);
    },
  );

  check("message.conversation", "another userId, roomId or agent opens another conversation", async ({ api, agents }) => {
    const agent = await agents.create();
    const other = await agents.create();
    const opened = [
      { agentId: agent.id, body: { userId: "u-1" } },
      { agentId: agent.id, body: { userId: "u-2" } },
      { agentId: agent.id, body: { userId: "u-1", roomId: "r-1" } },
      { agentId: agent.id, body: { userId: "u-1", roomId: "r-2" } },
      { agentId: agent.id, body: { roomId: "r-1" } },
      { agentId: other.id, body: { userId: "u-1" } },
    ];
    const conversations: string[] = [];
    for (const { agentId, body } of opened) {
      const reply = expectOk(await api.sendMessage(agentId, { text: "hello", ...body }));
      expect(reply.turn, `${JSON.stringify(body)} to ${agentId} opens a conversation`).toBe(1);
      conversations.push(reply.conversationId);
    }
    expect(new Set(conversations).size, "every pair differs").toBe(opened.length);
    // the interleaving did not disturb the first conversation
    const back = expectOk(await api.sendMessage(agent.id, { text: "again", userId: "u-1" }));
    expect({ conversationId: back.conversationId, turn: back.turn }).toEqual({ conversationId: conversations[0], turn: 2 });
  });

  check(
    ["message.conversation", "message.turn"],
    "with neither userId nor roomId every message opens a new conversation at turn 1",
    async ({ api, agents }) => {
      const agent = await agents.create();
      const replies = [];
      for (const text of ["one", "one", "one"]) replies.push(expectOk(await api.sendMessage(agent.id, { text })));
      expect(replies.map((r) => r.turn)).toEqual([1, 1, 1]);
      expect(new Set(replies.map((r) => r.conversationId)).size).toBe(replies.length);
    },
  );

  check(
    "reference.deterministic",
    "the same agent, text and turn give the same reply in two conversations",
    async ({ api, agents, skip }) => {
      if (!target.referenceFaults) skip("needs --reference-faults");
      const agent = await agents.create();
      const turns = async (userId: string) => {
        const texts = [];
        for (const text of ["hello", "and then?"]) texts.push(expectOk(await api.sendMessage(agent.id, { text, userId })).text);
        return texts;
      };
      const first = await turns("u-first");
      const second = await turns("u-second");
      expect(second).toEqual(first);
    },
  );

  // Mutation testing: a server that let two exchanges of one conversation run at once
  // made both replies for the same turn, while numbering them 1 and 2; no check saw it.
  check(
    ["reference.deterministic", "message.turn"],
    "two messages sent at once in one conversation: turns 1 and 2, each the reply its turn gives in order",
    async ({ api, agents, skip }) => {
      // PROFILE §5 counts a message's budget from its arrival, so the one that waits its turn has
      // two slow replies to fit in it: a shorter budget answers it 503, conformantly, every time
      // (half a second of slack for the exchanges themselves: a budget of exactly two replies fails too)
      const inTurnSeconds = 2 * MESSAGE_TIMING.slowModelSeconds + 0.5;
      if (target.messageTimeoutSeconds < inTurnSeconds)
        skip(
          `needs a message budget of at least ${inTurnSeconds} s (--message-timeout): the second of two messages in one conversation waits for the first, two mock-slow replies of about ${MESSAGE_TIMING.slowModelSeconds} s and their exchanges; this run's is ${target.messageTimeoutSeconds} s`,
        );
      const agent = await agents.withMockModel("mock-slow", skip);
      const texts = ["first", "second"];
      const sendTogether = (userId: string) =>
        Promise.all(texts.map((text) => api.sendMessage(agent.id, { text, userId }, { pace: false })));
      // the same texts one after the other, in each order, each in a conversation of its own: the
      // replies each turn gives, whichever order the service takes the two in. Sent while the two
      // go together: four slow replies in the time of two, not of four one after the other
      const inTurn = async (order: readonly string[], userId: string) => {
        const replies = [];
        for (const text of order) replies.push(await api.sendMessage(agent.id, { text, userId }));
        return replies;
      };
      const round = (n: number) =>
        Promise.all([
          sendTogether(`u-together-${n}`),
          inTurn(texts, `u-in-order-${n}`),
          inTurn([...texts].reverse(), `u-reverse-${n}`),
        ]);
      // PROFILE §5: past the budget 503 AGENT_UNAVAILABLE is conformant; slow replies that did not
      // fit in it ran on a starved runner (or service): the turns cannot be judged. Two rounds (each
      // in conversations of their own) before calling it inconclusive.
      const lateIn = (answers: Awaited<ReturnType<typeof round>>) =>
        answers.flat().find((res) => endedByTheBudget(res.error?.code, res.exchange.durationMs, target.messageTimeoutSeconds));
      // a counted answer of this agent's bucket first (an empty text: 400 at once), so that pacing
      // knows the bucket and lets the paced replays go with the two, not after the first answer
      await api.sendMessage(agent.id, { text: "" });
      let answered = await round(1);
      if (lateIn(answered)) answered = await round(2);
      const late = lateIn(answered);
      if (late)
        throw new HarnessError(
          `a reply answered 503 AGENT_UNAVAILABLE after ${Math.round(late.exchange.durationMs)} ms in both rounds: ${budgetEndedWords(target.messageTimeoutSeconds)}; slow replies in turn did not fit in it (a starved runner or service); inconclusive`,
        );
      const [answers, forward, backward] = answered;
      const together = answers.map((res, i) => ({ text: texts[i]!, reply: expectOk(res) }));
      together.sort((a, b) => a.reply.turn - b.reply.turn);
      expect(
        together.map((t) => t.reply.turn),
        "the turns of the two",
      ).toEqual([1, 2]);
      // the order the service took the two in, one after the other
      const inOrder = (together[0]!.text === texts[0] ? forward : backward).map((res) => expectOk(res));
      together.forEach(({ text, reply }, i) => {
        expect({ turn: inOrder[i]!.turn, text: inOrder[i]!.text }, `"${text}" at turn ${reply.turn}`).toEqual({
          turn: reply.turn,
          text: reply.text,
        });
      });
    },
  );
});
