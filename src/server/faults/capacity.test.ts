/**
 * The many-tenant faults are real, and asleep below MANY_TENANTS active accounts: the probe
 * fills one account's tier, serves another, and lets the first be refused once more.
 */
import { describe, expect, test } from "vitest";
import { PERMISSIONS } from "../../contract/index.js";
import { makeServer } from "../test-support.js";
import { CAPACITY_FAULTS, MANY_TENANTS } from "./capacity.js";

const TIER = 3;

/** `accounts` accounts with one key each: every one sends once, then the probe. The neighbour's next status. */
async function neighbourAfterRefusal(accounts: number, faults: string[]): Promise<number> {
  const ids = Array.from({ length: accounts }, (_, i) => i);
  const s = makeServer({
    faults,
    keys: {
      accounts: ids.map((i) => ({ id: `acct_${i}`, tierLimit: TIER, messageQuota: null })),
      keys: ids.map((i) => ({ key: `key_${i}`, account: `acct_${i}`, permissions: [...PERMISSIONS] })),
    },
  });
  const list = (i: number) => s.call("GET", "/v1/agents", { key: `key_${i}` });
  for (const i of ids) await list(i);
  // the flooding account empties its tier; its neighbour is served (2 of 3); the flood is refused
  while ((await list(0)).status !== 429);
  expect((await list(1)).status).toBe(200);
  expect((await list(0)).status).toBe(429);
  return (await list(1)).status;
}

describe("faults only many tenants reveal", () => {
  test("refusals-charge-neighbour-tier: from MANY_TENANTS accounts on, a refusal fills the neighbour's tier", async () => {
    expect(Object.keys(CAPACITY_FAULTS)).toEqual(["refusals-charge-neighbour-tier"]);
    expect(await neighbourAfterRefusal(MANY_TENANTS, [])).toBe(200);
    expect(await neighbourAfterRefusal(MANY_TENANTS - 1, ["refusals-charge-neighbour-tier"])).toBe(200);
    expect(await neighbourAfterRefusal(MANY_TENANTS, ["refusals-charge-neighbour-tier"])).toBe(429);
  });
});
