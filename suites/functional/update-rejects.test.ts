import { describe } from "vitest";
import { suiteEndpoints } from "../../fixtures/expand.js";
import type { ServiceClient } from "../../src/client/index.js";
import type { ClauseId } from "../../src/contract/index.js";
import { declareFile } from "../support/declare-file.js";
import { expandFixture } from "../support/fixtures.js";
import { check, expect, expectInvalid, expectOk, namingIn } from "../support/harness.js";
import { boundaries, sharedBase } from "../support/update-base.js";

declareFile({});

/* PROFILE §5 Update, the patches it must reject; the accepted ones are in update.test.ts. */

const patchOf = (api: ServiceClient, id: string, body: unknown) => api.call("updateAgent", { agentId: id, body });

/** The rows leave it as it is (each reads it back): one agent for the table. */
const tableBase = sharedBase();

/**
 * PROFILE §5: a rejected update changes nothing — so the rows share one base agent rather than
 * spend a Create and a Delete each (10 a window, per key); each row reads it back after its patch. The rows
 * of a rule Update shares with Create are exercised here, where the bucket is wide (Update 30 a
 * window, Create 10); create.test.ts sends Create its own rows and a few probes.
 */
describe("PATCH /agents/{agentId} rejects", () => {
  for (const row of boundaries.rejected.filter((r) => suiteEndpoints(r).includes("update")))
    check(
      [...new Set<ClauseId>([row.on.update!, ...(row.named ? [row.named] : []), "update.rejected-no-effect"])],
      `${row.title}: 400${namingIn(row.named ?? row.on.update!)}, the record unchanged`,
      async ({ api }) => {
        const shared = await tableBase(api);
        const { agent, seen } = shared;
        expectInvalid(
          await patchOf(api, agent.id, expandFixture(row.body, { name: agent.name })),
          row.fields,
          row.named ?? row.on.update!,
        );
        const after = expectOk(await api.getAgent(agent.id));
        // a row that did change it fails here; the next rows judge only their own patch
        shared.seen = after;
        expect(after, "the record after the rejected patch").toEqual(seen);
      },
    );
});
