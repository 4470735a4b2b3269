import { beforeAll, describe } from "vitest";
import { declareFile } from "../support/declare-file.js";
import { afterQuotaLane, check, expect, expectOk } from "../support/harness.js";
import { HAND_OFF_TIMEOUT_MS } from "../support/limits.js";
import { ids, walkAll } from "../support/listing.js";

declareFile({ keys: ["otherAccount"], createsAgentsInOtherAccount: true });

/**
 * PROFILE §5 List, §6: isolation, apart from list.test.ts. It creates an agent in another account:
 * on a deployment with account lanes that is the quota account, whose own lane lists it meanwhile
 * (src/plan/lanes.ts), so it runs after that lane has ended.
 */
beforeAll(() => afterQuotaLane(HAND_OFF_TIMEOUT_MS), HAND_OFF_TIMEOUT_MS + 10_000);

describe("GET /agents", () => {
  check("list.isolation", "only the calling account's agents are listed", async ({ api, otherApi, agents }) => {
    const mine = await agents.create();
    const created = await otherApi.createAgent({ name: agents.name() });
    const theirs = expectOk(created, 201);
    try {
      expect(ids((await walkAll(otherApi)).items), "the other account's listing").not.toContain(mine.id);
      const mainIds = ids((await walkAll(api)).items);
      expect(mainIds, "the main account's listing").not.toContain(theirs.id);
      expect(mainIds, "the main account's listing").toContain(mine.id);
    } finally {
      // not through `agents`: that factory deletes with the main account's key
      await otherApi.deleteAgent(theirs.id);
    }
  });
});
