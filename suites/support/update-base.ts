import { afterAll } from "vitest";
import type { AgentBoundaries } from "../../fixtures/expand.js";
import type { ServiceClient } from "../../src/client/index.js";
import { type Agent, type ClauseId, type CreateAgentBody, PLATFORMS, type UpdateAgentBody } from "../../src/contract/index.js";
import { expandFixture, loadFixture } from "./fixtures.js";
import { AgentFactory } from "./harness.js";

/* PROFILE §5 Update: the base agent of update.test.ts, update-rejects.test.ts and update-messages.test.ts. */

export type JsonObject = Record<string, unknown>;

/** Hand-written from the PROFILE text (STYLE §2): the schemas in src/contract are not consulted. */
export const boundaries = loadFixture<AgentBoundaries<ClauseId>>("agent.json");

/** The fixture's base agent: its create body, and the patch that puts any row's changes back. */
export async function createBase(agents: AgentFactory): Promise<{ agent: Agent; restore: UpdateAgentBody }> {
  const name = agents.name();
  const body = { ...(expandFixture(boundaries.base, { name }) as JsonObject), name } as CreateAgentBody;
  const agent = await agents.create(body);
  // base sets every nested key, so re-sending it restores it; platforms it lacks are removed
  const platforms = Object.fromEntries(PLATFORMS.map((p) => [p, body.platforms?.[p] ?? null]));
  return { agent, restore: { ...body, platforms, status: "active" } as UpdateAgentBody };
}

/**
 * One base agent shared by the rows of a table (a Create and a Delete per row saved: Create is 10 a window),
 * made by the first row that runs and deleted after the file; `seen` is the record as last read.
 */
export function sharedBase() {
  let shared: { factory: AgentFactory; agent: Agent; restore: UpdateAgentBody; seen: Agent } | undefined;
  afterAll(async () => {
    await shared?.factory.cleanup();
  });
  return async (api: ServiceClient) => {
    if (!shared) {
      const factory = new AgentFactory(api, "table");
      const { agent, restore } = await createBase(factory);
      shared = { factory, agent, restore, seen: agent };
    }
    return shared;
  };
}
