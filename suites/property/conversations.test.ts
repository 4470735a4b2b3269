import fc from "fast-check";
import { describe, vi } from "vitest";
import { invalidMessage, validMessage } from "../../src/arbitraries/messages.js";
import { ConversationModel, type ModelAgent } from "../../src/model/agents.js";
import { declareFile } from "../support/declare-file.js";
import { check, expect, target } from "../support/harness.js";
import { createFor, expectEqual, invalid, ok, remove, sendInvalid } from "./cases.js";
import {
  BUDGETED,
  expectHistoryKept,
  firstClient,
  nextClient,
  runProperty,
  runsFor,
  skipUnlessReplayed,
  tally,
  unlessBudgetEnded,
  unlessModelFailed,
} from "./support.js";

declareFile({ sendsMessages: true });

/*
 * PROFILE §4–§5 as properties: generated inputs from the contract, expected
 * outcomes from the model (src/model), every response through the response-level checks.
 * Each case is self-contained (its own agents), so the shrunk case replays exactly. The
 * properties are four files (creates, patches, lists, conversations) so that a run's workers
 * take them side by side.
 */

// a property runs many cases; on a paced deployment that is minutes, not the functional checks' seconds
vi.setConfig({ testTimeout: 20 * 60_000 });

describe("property: messages", () => {
  check(
    ["message.conversation", "message.turn", "message.reply", "message.stream"],
    "property: for random messages to an agent, conversationId and turn follow the model",
    async ({ skip }) => {
      skipUnlessReplayed("messages", skip);
      const ran = await runProperty({
        title: "messages",
        numRuns: runsFor(80, { requests: 0.14, creates: 0.1 }, { requests: 6, creates: 1 }),
        property: () =>
          fc.asyncProperty(fc.array(fc.tuple(validMessage(), fc.boolean()), { minLength: 1, maxLength: 6 }), async (messages) => {
            const client = nextClient();
            const agent = await createFor(client, { name: `${target.runPrefix}conversations` });
            const conversations = new ConversationModel();
            try {
              for (const [{ generator, value }, stream] of messages) {
                tally(stream ? `${generator}.stream` : generator);
                const key = ConversationModel.key(agent.id, value.userId, value.roomId);
                let reply: import("../../src/contract/index.js").MessageReply | undefined;
                if (stream) {
                  const res = await client.streamMessage(agent.id, value);
                  if (res.status === 200) unlessModelFailed(res.error?.code, "a streamed message to this run's agent");
                  unlessBudgetEnded(res, "a streamed message to this run's agent");
                  expectEqual(
                    { status: res.status, error: res.error, parseIssues: res.parseIssues },
                    { status: 200, error: undefined, parseIssues: [] },
                  );
                  reply = res.done;
                  expect(reply?.text, "PROFILE §5: done.text is the concatenated deltas").toBe(res.text);
                } else {
                  const res = await client.sendMessage(agent.id, value);
                  if (res.status === 500) unlessModelFailed(res.error?.code, "a message to this run's agent");
                  unlessBudgetEnded(res, "a message to this run's agent");
                  reply = ok(res);
                }
                expect(reply).toBeDefined();
                const { conversationId, turn, userId, roomId, agentId } = reply!;
                expectEqual(
                  { turn, userId, roomId, agentId },
                  {
                    turn: conversations.nextTurn(key),
                    userId: value.userId ?? null,
                    roomId: value.roomId ?? null,
                    agentId: agent.id,
                  },
                );
                const expectedId = conversations.expectedId(key);
                if (expectedId !== undefined)
                  expect(conversationId, "PROFILE §5: the same (agent, userId, roomId) keeps its conversation").toBe(expectedId);
                else
                  expect(
                    conversations.ownerOf(conversationId),
                    "PROFILE §5: another (userId, roomId) opens another conversation",
                  ).toBeUndefined();
                conversations.completed(key, conversationId);
                expectHistoryKept();
              }
            } finally {
              await remove(client, agent.id);
            }
          }),
      });
      expect(ran, "cases run").toBeGreaterThan(0);
    },
  );

  check(
    ["message.body", "status.no-5xx-on-input"],
    "property: an invalid message body → 400 (details, when given, name the field)",
    async ({ skip }) => {
      skipUnlessReplayed("message-invalid", skip);
      const client = firstClient();
      // a few agents in turn: the per-agent message bucket (PROFILE §7) is shared by every key
      const agents: ModelAgent[] = [];
      for (let i = 0; i < (BUDGETED ? 2 : 4); i++)
        agents.push(await createFor(client, { name: `${target.runPrefix}invalid-messages-${i}` }));
      let next = 0;
      try {
        const ran = await runProperty({
          title: "message-invalid",
          numRuns: runsFor(200, { requests: 0.08, creates: 0 }, { requests: 1, creates: 0 }),
          property: () =>
            fc.asyncProperty(invalidMessage(), async (input) => {
              tally(input.generator);
              invalid(
                await sendInvalid(nextClient(), "sendMessage", input, agents[next++ % agents.length]!.id),
                input.field,
                input.mustName,
              );
            }),
        });
        expect(ran, "cases run").toBeGreaterThan(0);
      } finally {
        for (const agent of agents) await remove(client, agent.id);
      }
    },
  );
});
