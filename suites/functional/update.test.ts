import { describe } from "vitest";
import type { ServiceClient } from "../../src/client/index.js";
import type { Agent } from "../../src/contract/index.js";
import { declareFile } from "../support/declare-file.js";
import { expandFixture } from "../support/fixtures.js";
import { check, expect, expectError, expectOk, SERVICE_CLOCK, smoke } from "../support/harness.js";
import { boundaries, createBase, type JsonObject, sharedBase } from "../support/update-base.js";

declareFile({});

/*
 * PROFILE §5 Update; the rejected patches are in update-rejects.test.ts (a file of their own: at
 * 300 ms a round trip this file's checks took a minute in one worker), the checks that send
 * messages besides in update-messages.test.ts.
 */

const patchOf = (api: ServiceClient, id: string, body: unknown) => api.call("updateAgent", { agentId: id, body });

describe("PATCH /agents/{agentId}", () => {
  check("update.noop", "{} answers 200 with the record unchanged, updatedAt included", async ({ api, agents }) => {
    const { agent } = await createBase(agents);
    expect(expectOk(await patchOf(api, agent.id, {}))).toEqual(agent);
    expect(expectOk(await api.getAgent(agent.id))).toEqual(agent);
  });

  check("update.content-type", "application/merge-patch+json and application/json are both accepted", async ({ api, agents }) => {
    const { agent } = await createBase(agents);
    const merged = expectOk(
      await api.updateAgent(
        agent.id,
        { bio: "via merge-patch", modelSettings: { temperature: 1 } },
        { contentType: "application/merge-patch+json" },
      ),
    );
    expect(merged).toEqual({
      ...agent,
      bio: "via merge-patch",
      modelSettings: { ...agent.modelSettings, temperature: 1 },
      updatedAt: merged.updatedAt,
    });
    const plain = expectOk(await api.updateAgent(agent.id, { bio: "via json" }, { contentType: "application/json" }));
    expect(plain).toEqual({ ...merged, bio: "via json", updatedAt: plain.updatedAt });
  });

  // Mutation testing: an updatedAt that moved by 1 ms from the last one on each update,
  // whatever the time, survived every check; it is the time of the update (within the clock skew).
  // PROFILE §4: both are times on the service's clock, judged there (offset from its Date header).
  check(
    "record.timestamps",
    "createdAt and updatedAt are the times of the create and of each update",
    async ({ api, agents }) => {
      const skewMs = SERVICE_CLOCK.toleranceSeconds * 1000;
      const onService = (runnerMs: number) => runnerMs + SERVICE_CLOCK.offsetSeconds * 1000;
      const before = Date.now();
      const { agent } = await createBase(agents);
      const createdAt = Date.parse(agent.createdAt);
      expect(createdAt, "createdAt after the create was sent").toBeGreaterThanOrEqual(Math.floor(onService(before)) - skewMs);
      expect(createdAt, "createdAt before its answer came").toBeLessThanOrEqual(onService(Date.now()) + skewMs + 1000);
      for (const bio of ["first change", "second change", "third change"]) {
        const res = await api.updateAgent(agent.id, { bio });
        const updatedAt = Date.parse(expectOk(res).updatedAt);
        // whole milliseconds on the wire: the answer may round the send time down
        expect(updatedAt, `updatedAt after "${bio}"`).toBeGreaterThanOrEqual(Math.floor(onService(res.exchange.sentAt)) - skewMs);
        expect(updatedAt, `updatedAt after "${bio}"`).toBeLessThanOrEqual(onService(res.exchange.receivedAt) + skewMs + 1000);
      }
    },
  );

  // HTTP media types: case-insensitive, optional whitespace before parameters (RFC 9110 §8.3.1)
  check("update.content-type", "Application/Merge-Patch+JSON ; charset=utf-8 is accepted too", async ({ api, agents }) => {
    const { agent } = await createBase(agents);
    const res = await api.updateAgent(
      agent.id,
      { bio: "spelled otherwise" },
      { contentType: "Application/Merge-Patch+JSON ; charset=utf-8" },
    );
    expect(expectOk(res)).toEqual({ ...agent, bio: "spelled otherwise", updatedAt: expect.any(String) });
  });

  smoke("update.status", "status alone switches active ↔ inactive, both ways", async ({ api, agents }) => {
    const { agent } = await createBase(agents);
    const config = { ...agent, updatedAt: expect.any(String) };
    for (const status of ["inactive", "inactive", "active", "active", "inactive", "active"] as const) {
      const res = expectOk(await api.updateAgent(agent.id, { status }));
      expect(res, `after status ${status}`).toEqual({ ...config, status });
    }
  });

  smoke("agent.not-found", "an unknown or malformed id is 404 AGENT_NOT_FOUND", async ({ api }) => {
    for (const id of ["agt_doesnotexist000", "a b", "a".repeat(65)])
      expectError(await api.updateAgent(id, { bio: "x" }), "AGENT_NOT_FOUND");
  });
});

/** The merge rows each put it back to the base: one agent for the table. */
const tableBase = sharedBase();

/** PROFILE §5 merge patch, one check per row of the table, each from the base record and back to it. */
describe("PATCH /agents/{agentId} merges", () => {
  for (const row of boundaries.merge.filter((r) => r.suite !== false))
    check(
      ["update.merge-patch", "record.timestamps", "record.token-write-only"],
      `${row.title}; updatedAt moves, createdAt stays`,
      async ({ api }) => {
        const shared = await tableBase(api);
        const { agent, restore } = shared;
        const before = shared.seen;
        try {
          const after = expectOk(await patchOf(api, agent.id, expandFixture(row.patch, { name: agent.name }))) as Agent;
          expect(after).toEqual({
            ...before,
            ...(expandFixture(row.expect, { name: agent.name }) as JsonObject),
            updatedAt: after.updatedAt,
          });
          expect(after.createdAt, "createdAt never changes").toBe(agent.createdAt);
          expect(after.updatedAt, "updatedAt changes on an effective update").not.toBe(before.updatedAt);
          expect(expectOk(await api.getAgent(agent.id)), "GET shows the patched record").toEqual(after);
        } finally {
          // the next row starts from the base again, whatever this one did
          shared.seen = expectOk(await api.updateAgent(agent.id, restore));
        }
        expect(shared.seen, "the base restored").toEqual({ ...agent, updatedAt: shared.seen.updatedAt });
      },
    );
});
