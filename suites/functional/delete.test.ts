import { describe } from "vitest";
import type { ServiceClient } from "../../src/client/index.js";
import { declareFile } from "../support/declare-file.js";
import { expect, expectError, expectOk, smoke } from "../support/harness.js";

declareFile({ keys: ["readOnly"], sendsMessages: true });

/** Whether the account's list shows `id` (newest first: a fresh agent is on page 1). */
async function listed(api: ServiceClient, id: string): Promise<boolean> {
  return expectOk(await api.listAgents({ limit: 100 })).some((a) => a.id === id);
}

describe("DELETE /agents/{agentId}", () => {
  smoke(
    ["delete.ok", "delete.gone"],
    "answers 200 {id, deleted: true}; afterwards every path of the agent is 404 and it is gone from the list",
    async ({ api, agents }) => {
      const agent = await agents.create();
      expectOk(await api.sendMessage(agent.id, { text: "hello", userId: "u1" }));
      expect(await listed(api, agent.id), "listed before the delete").toBe(true);

      const res = await api.deleteAgent(agent.id);
      expect(expectOk(res)).toEqual({ id: agent.id, deleted: true });

      expectError(await api.getAgent(agent.id), "AGENT_NOT_FOUND");
      expectError(await api.updateAgent(agent.id, { bio: "x" }), "AGENT_NOT_FOUND");
      expectError(await api.sendMessage(agent.id, { text: "hello", userId: "u1" }), "AGENT_NOT_FOUND");
      expectError(await api.deleteAgent(agent.id), "AGENT_NOT_FOUND");
      expect(await listed(api, agent.id), "listed after the delete").toBe(false);
    },
  );

  smoke(
    ["delete.forbidden", "auth.permissions"],
    "a key without agents:delete gets 403 FORBIDDEN and the agent is untouched",
    async ({ api, readOnlyApi, agents }) => {
      const agent = await agents.create({ bio: "keep me" });
      expectError(await readOnlyApi.deleteAgent(agent.id), "FORBIDDEN");
      expect(expectOk(await api.getAgent(agent.id)), "the agent after the refused delete").toEqual(agent);
      expect(await listed(api, agent.id)).toBe(true);
    },
  );

  smoke("agent.not-found", "an unknown or malformed id is 404 AGENT_NOT_FOUND", async ({ api }) => {
    for (const id of ["agt_doesnotexist000", "a b", "a".repeat(65)]) expectError(await api.deleteAgent(id), "AGENT_NOT_FOUND");
  });
});
