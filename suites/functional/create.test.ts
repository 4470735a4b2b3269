import { randomUUID } from "node:crypto";
import { describe } from "vitest";
import { type AgentBoundaries, suiteEndpoints } from "../../fixtures/expand.js";
import type { ServiceClient } from "../../src/client/index.js";
import type { Agent, ClauseId, CreateAgentBody } from "../../src/contract/index.js";
import { declareFile } from "../support/declare-file.js";
import { expandFixture, loadFixture } from "../support/fixtures.js";
import {
  check,
  clientFor,
  expect,
  expectError,
  expectInvalid,
  expectOk,
  namingIn,
  rememberToken,
  smoke,
  target,
} from "../support/harness.js";

declareFile({ keys: ["readOnly", "otherAccount"] });

type JsonObject = Record<string, unknown>;

/** Hand-written from the PROFILE text (STYLE §2): the schemas in src/contract are not consulted. */
const boundaries = loadFixture<AgentBoundaries<ClauseId>>("agent.json");

/** PROFILE §4, by hand: an id the server made. */
const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** PROFILE §4, by hand: RFC 3339 UTC with milliseconds. */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A fixture body for an agent named `name`: the name is added unless the row omits it on purpose. */
function bodyOf(raw: JsonObject, name: string): JsonObject {
  const { $omitName, ...rest } = raw;
  const body = expandFixture(rest, { name }) as JsonObject;
  return $omitName || "name" in body ? body : { name, ...body };
}

/** PROFILE §4: how platforms given on input read in a response. */
function platformsAsRead(platforms: unknown): JsonObject {
  return Object.fromEntries(
    Object.entries((platforms ?? {}) as Record<string, { enabled: boolean; token?: string }>).map(([p, v]) => [
      p,
      { enabled: v.enabled, tokenSet: typeof v.token === "string" },
    ]),
  );
}

/** PROFILE §5 Create: the default record with the body merged in (nested objects may be partial). */
function expectedRecord(body: JsonObject): JsonObject {
  const record: JsonObject = { ...boundaries.defaults };
  for (const [key, value] of Object.entries(body)) {
    const fallback = record[key];
    record[key] =
      key === "platforms"
        ? platformsAsRead(value)
        : typeof value === "object" && value !== null && !Array.isArray(value) && typeof fallback === "object"
          ? { ...(fallback as JsonObject), ...(value as JsonObject) }
          : value;
  }
  return record;
}

function configOf(agent: Agent): JsonObject {
  const { id: _id, createdAt: _c, updatedAt: _u, ...config } = agent;
  return config;
}

describe("POST /agents", () => {
  smoke(
    ["create.created", "record.defaults", "record.shape", "record.timestamps", "status.lifecycle"],
    "a name alone answers 201 with exactly the default record, active, with RFC 3339 times",
    async ({ api, agents }) => {
      // stored as sent: trailing spaces and an emoji are part of the name
      const name = `${agents.name()} 😀  `;
      const agent = await agents.create({ name });
      expect(Object.keys(agent).sort(), "the record's fields").toEqual([...boundaries.recordFields].sort());
      expect(agent.id).toMatch(ID_PATTERN);
      expect(configOf(agent)).toEqual({ ...boundaries.defaults, name });
      for (const at of [agent.createdAt, agent.updatedAt]) {
        expect(at).toMatch(TIMESTAMP);
        expect(new Date(at).toISOString(), "a real instant").toBe(at);
      }
      expect(expectOk(await api.getAgent(agent.id)), "GET shows what the create answered").toEqual(agent);
    },
  );

  check(
    ["create.partial-nested", "record.defaults"],
    "a partial nested object keeps the defaults of its other keys",
    async ({ api, agents }) => {
      const body = {
        modelSettings: { model: "x" },
        knowledge: { expertise: ["e"] },
        goals: { motivations: ["m"] },
      } satisfies Partial<CreateAgentBody>;
      const agent = await agents.create(body);
      expect(agent.modelSettings, "provider stays mock").toEqual({ provider: "mock", model: "x" });
      expect(configOf(agent)).toEqual(expectedRecord({ name: agent.name, ...body }));
      expect(expectOk(await api.getAgent(agent.id))).toEqual(agent);
    },
  );

  check(
    ["record.token-write-only", "create.platform-enabled"],
    "platforms read {enabled, tokenSet} and the token never comes back",
    async ({ api, agents }) => {
      const token = rememberToken(`tok-${randomUUID()}`);
      const created = await api.createAgent({
        name: agents.name(),
        platforms: { discord: { enabled: true, token }, twitter: { enabled: false } },
      });
      const agent = expectOk(created, 201);
      agents.track(agent.id);
      const expected = { discord: { enabled: true, tokenSet: true }, twitter: { enabled: false, tokenSet: false } };
      expect(agent.platforms).toEqual(expected);
      const got = await api.getAgent(agent.id);
      expect(expectOk(got).platforms).toEqual(expected);
      const listed = await api.listAgents({ limit: 100 });
      expect(expectOk(listed).find((a) => a.id === agent.id)?.platforms, "the listed agent").toEqual(expected);
      for (const res of [created, got, listed])
        expect(res.exchange.response.bodyText.includes(token), "token in a body").toBe(false);
    },
  );

  check(["create.status", "status.lifecycle"], "status inactive is honoured", async ({ api, agents }) => {
    const agent = await agents.create({ status: "inactive" });
    expect(agent.status).toBe("inactive");
    expect(expectOk(await api.getAgent(agent.id)).status).toBe("inactive");
  });

  for (const row of boundaries.accepted.filter((r) => r.suite !== false))
    check("record.lengths", `accepts ${row.title}`, async ({ api, agents }) => {
      const body = bodyOf(row.body, agents.name());
      // the create is what this check judges, not its setup: a value at its bound refused is a
      // record.lengths finding (PROFILE §4), where agents.create would call it a blocked setup
      const agent = expectOk(await api.createAgent(body as CreateAgentBody), 201);
      agents.track(agent.id);
      expect(configOf(agent)).toEqual(expectedRecord(body));
    });
});

// A rule Update shares is exercised on Update (update-rejects.test.ts), where the bucket is wide; here the
// rows of Create alone, and the probes that show Create applies the same rule. Every other row
// goes to the other account's key when the run has one: its Create bucket is its own (PROFILE §7,
// per key), so these rows do not spend the main key's windows (a deployment run's plan: docs/deployments.md).
const otherKey = target.keys.otherAccount;
describe("POST /agents rejects", () => {
  for (const [i, row] of boundaries.rejected.filter((r) => suiteEndpoints(r).includes("create")).entries())
    check(row.on.create!, `${row.title}: 400${namingIn(row.on.create!)}`, async ({ api, agents }) => {
      const client = otherKey && i % 2 === 1 ? clientFor(otherKey, "other") : api;
      const res = await client.call("createAgent", { body: bodyOf(row.body, agents.name()) });
      const id = (res.data as Agent | undefined)?.id;
      // created by mistake: delete it with the key that made it
      if (res.status === 201 && id) {
        if (client === api) agents.track(id);
        else await client.deleteAgent(id);
      }
      expectInvalid(res, row.fields, row.on.create!);
    });
});

describe("a rejected create creates nothing", () => {
  /**
   * This run's agents on the account's first page (newest first: an agent a rejected create made
   * would be there) and whether one is named `name`. Only the run's own: another client creating
   * and deleting agents in the account moves its total, never what this run made.
   */
  async function census(api: ServiceClient, name: string) {
    const data = expectOk(await api.listAgents({ limit: 100 }));
    const ours = data.filter((a) => a.name.startsWith(target.runPrefix)).map((a) => a.id);
    return { ours, named: data.some((a) => a.name === name) };
  }

  /** What a rejected create left: agents of this run that were not there before it, and whether `name` is listed. */
  async function madeSince(api: ServiceClient, name: string, before: { ours: string[] }) {
    const after = await census(api, name);
    return { newOfThisRun: after.ours.filter((id) => !before.ours.includes(id)), named: after.named };
  }

  smoke("create.rejected-no-effect", "a 400 and a 401 leave the list as it was", async ({ api, agents }) => {
    const name = agents.name();
    const before = await census(api, name);
    const invalid = await api.call("createAgent", { body: { name, plugins: ["images", "images"] } });
    const anonymous = await api.call("createAgent", { body: { name }, auth: "none" });
    for (const res of [invalid, anonymous]) {
      const id = (res.data as Agent | undefined)?.id;
      if (res.status === 201 && id) agents.track(id);
    }
    expectError(invalid, "INVALID_REQUEST");
    expectError(anonymous, "UNAUTHORIZED");
    expect(await madeSince(api, name, before)).toEqual({ newOfThisRun: [], named: false });
  });

  smoke(
    ["create.rejected-no-effect", "auth.permissions"],
    "a key without agents:write gets 403 and creates nothing",
    async ({ api, readOnlyApi, agents }) => {
      const name = agents.name();
      const before = await census(api, name);
      const res = await readOnlyApi.createAgent({ name });
      if (res.status === 201 && res.data) agents.track(res.data.id);
      expectError(res, "FORBIDDEN");
      expect(await madeSince(api, name, before)).toEqual({ newOfThisRun: [], named: false });
    },
  );
});
