import { describe } from "vitest";
import { declareFile } from "../support/declare-file.js";
import { check, expect, expectError, expectOk } from "../support/harness.js";
import { createBase } from "../support/update-base.js";

declareFile({ sendsMessages: true });

/**
 * PROFILE §5 Update: the checks that send messages too, apart from update.test.ts, which sends
 * none and so may run on the quota account (src/plan/lanes.ts).
 */
describe("PATCH /agents/{agentId}", () => {
  check("update.status", "from error, status alone goes to inactive or to active", async ({ api, agents, skip }) => {
    const agent = await agents.withMockModel("mock-error", skip);
    /** PROFILE §5 / §10: a model failure puts the agent in `error`. */
    const fail = async () => {
      expectError(await api.sendMessage(agent.id, { text: "fail, please" }), "MODEL_ERROR");
      expect(expectOk(await api.getAgent(agent.id)).status, "precondition: the agent is in error").toBe("error");
    };
    await fail();
    expect(expectOk(await api.updateAgent(agent.id, { status: "inactive" })).status, "error → inactive").toBe("inactive");
    expect(expectOk(await api.updateAgent(agent.id, { status: "active" })).status, "inactive → active").toBe("active");
    await fail();
    expect(expectOk(await api.updateAgent(agent.id, { status: "active" })).status, "error → active").toBe("active");
    expect(expectOk(await api.getAgent(agent.id)).status).toBe("active");
  });

  check(
    ["status.lifecycle", "update.status"],
    "inactive keeps the config and the conversation history",
    async ({ api, agents }) => {
      const { agent } = await createBase(agents);
      const first = expectOk(await api.sendMessage(agent.id, { text: "hello", userId: "u1", roomId: "r1" }));
      const inactive = expectOk(await api.updateAgent(agent.id, { status: "inactive" }));
      expect(inactive).toEqual({ ...agent, status: "inactive", updatedAt: inactive.updatedAt });
      expect(expectOk(await api.getAgent(agent.id)), "GET while inactive").toEqual(inactive);
      const active = expectOk(await api.updateAgent(agent.id, { status: "active" }));
      expect(active).toEqual({ ...agent, updatedAt: active.updatedAt });
      const second = expectOk(await api.sendMessage(agent.id, { text: "again", userId: "u1", roomId: "r1" }));
      expect({ conversationId: second.conversationId, turn: second.turn }, "the conversation went on").toEqual({
        conversationId: first.conversationId,
        turn: first.turn + 1,
      });
    },
  );
});
