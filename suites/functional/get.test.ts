import { randomUUID } from "node:crypto";
import { describe } from "vitest";
import { declareFile } from "../support/declare-file.js";
import { check, expectError, expectOk, rememberToken, smoke } from "../support/harness.js";

declareFile({ keys: ["otherAccount"] });

describe("GET /agents/{agentId}", () => {
  smoke("get.found", "answers 200 with the record as created", async ({ api, agents, expect }) => {
    const created = await agents.create({
      bio: "hello",
      personality: { traits: ["curious"] },
      platforms: { telegram: { enabled: true, token: rememberToken(`tok-${randomUUID()}`) } },
      plugins: ["images"],
      modelSettings: { provider: "acme", model: "acme-large", temperature: 0.3, maxTokens: 64 },
      status: "inactive",
    });
    const got = expectOk(await api.getAgent(created.id));
    expect(got).toEqual(created);
  });

  // PROFILE §5 Get: unknown and malformed ids alike are 404 AGENT_NOT_FOUND (the client percent-encodes the id)
  const missing: [title: string, id: string][] = [
    ["an unknown id", "agt_doesnotexist000"],
    ["an unknown id of 64 characters", "a".repeat(64)],
    ["a malformed id with a slash and dots", "../x"],
    ["a malformed id with a space", "a b"],
    ["a malformed id of 65 characters", "a".repeat(65)],
    ["a malformed id with a non-ASCII letter", "agént"],
  ];
  for (const [title, id] of missing)
    check("get.not-found", `${title} is 404 AGENT_NOT_FOUND`, async ({ api }) => {
      expectError(await api.getAgent(id), "AGENT_NOT_FOUND");
    });

  smoke("get.not-found", "another account's agent is 404 AGENT_NOT_FOUND, never 403", async ({ agents, otherApi }) => {
    const agent = await agents.create();
    expectError(await otherApi.getAgent(agent.id), "AGENT_NOT_FOUND");
  });
});
