import { describe } from "vitest";
import { check, expectError, expectOk } from "../support/harness.js";

describe("GET /agents/{agentId}", () => {
  check("get.found", "answers 200 with the record as created", async ({ api, agents, expect }) => {
    const created = await agents.create({ bio: "hello" });
    const got = expectOk(await api.getAgent(created.id));
    expect(got).toEqual(created);
  });

  check("get.not-found", "an unknown id is 404 AGENT_NOT_FOUND", async ({ api }) => {
    expectError(await api.getAgent("agt_doesnotexist000"), "AGENT_NOT_FOUND");
  });
});
