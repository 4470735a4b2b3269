import { describe } from "vitest";
import type { ApiResult, AuthMode, Exchange, ServiceClient } from "../../src/client/index.js";
import {
  type Agent,
  ENDPOINT_LIST,
  ENDPOINTS,
  type EndpointId,
  type EndpointSpec,
  HEADERS,
  LIST_LIMITS,
} from "../../src/contract/index.js";
import { declareFile } from "../support/declare-file.js";
import {
  type AgentFactory,
  check,
  expect,
  expectError,
  expectOk,
  HarnessError,
  Inconclusive,
  smoke,
  target,
  waitForRefill,
} from "../support/harness.js";

declareFile({
  keys: ["readOnly", "otherAccount", "agentless"],
  sendsMessages: true,
  sendsUnpaced: true,
  readsRemainingAcrossAnswers: true,
});

/* PROFILE §6 authentication, permissions, isolation and keys. */

/** Credentials PROFILE §6 refuses with 401: missing, another scheme, empty or unknown key. */
const REFUSED: Array<{ title: string; auth: AuthMode }> = [
  { title: "no Authorization header", auth: "none" },
  { title: "the Basic scheme", auth: { header: "Basic dXNlcjpwYXNzd29yZA==" } },
  { title: "Bearer without a key", auth: { header: "Bearer" } },
  { title: "Bearer and a blank key", auth: { header: "Bearer   " } },
  { title: "an unknown key", auth: { header: `Bearer ak_unknown${"0".repeat(32)}` } },
  { title: "the valid key under the Token scheme", auth: { header: `Token ${target.keys.main}` } },
  { title: "the valid key without a scheme", auth: { header: target.keys.main } },
];

/** The contract's example request of each endpoint; a create is named by `agents`, for cleanup. */
function validRequest(endpoint: EndpointId, agents: AgentFactory): EndpointSpec["example"] {
  const { example }: EndpointSpec = ENDPOINTS[endpoint];
  return endpoint === "createAgent" ? { body: { ...ENDPOINTS.createAgent.example.body, name: agents.name() } } : example;
}

/** Call an endpoint as `client`, on `agentId` when the path has one; a create that succeeded is cleaned up. */
async function callAs(
  client: ServiceClient,
  endpoint: EndpointId,
  { agentId, agents, ...options }: { agentId: string; agents: AgentFactory; auth?: AuthMode; pace?: boolean },
): Promise<ApiResult<unknown>> {
  const { body, query } = validRequest(endpoint, agents);
  const res = await client.call(endpoint, {
    ...(ENDPOINTS[endpoint].path.includes(":agentId") ? { agentId } : {}),
    ...(body !== undefined ? { body } : {}),
    ...(query !== undefined ? { query } : {}),
    ...options,
  });
  const created = res.status === 201 ? (res.data as { id?: string } | undefined)?.id : undefined;
  if (created) agents.track(created);
  return res;
}

const FAKE_ID = "agt_doesnotexist000";

describe("401 UNAUTHORIZED", () => {
  // smoke: one refusal per endpoint
  for (const endpoint of ENDPOINT_LIST)
    for (const { title, auth } of REFUSED)
      (title === REFUSED[0]?.title ? smoke : check)(
        "auth.required",
        `${endpoint.method} ${endpoint.path} with ${title} → 401 and WWW-Authenticate: Bearer`,
        async ({ api, agents }) => {
          const res = await callAs(api, endpoint.id, { agentId: FAKE_ID, agents, auth });
          expectError(res, "UNAUTHORIZED");
          expect(res.exchange.response.headers[HEADERS.wwwAuthenticate] ?? "", "WWW-Authenticate").toMatch(/^\s*bearer\b/i);
        },
      );

  smoke("auth.required", "refused update and delete leave the agent as it was", async ({ api, agents }) => {
    const agent = await agents.create({ bio: "before" });
    for (const { title, auth } of REFUSED) {
      expectError(await api.updateAgent(agent.id, { bio: "after" }, { auth }), "UNAUTHORIZED");
      expectError(await api.deleteAgent(agent.id, { auth }), "UNAUTHORIZED");
      expect(expectOk(await api.getAgent(agent.id)), `after ${title}`).toEqual(agent);
    }
  });

  for (const scheme of ["bearer", "BEARER", "bEaReR"])
    check("auth.scheme-case", `the scheme "${scheme}" is accepted`, async ({ api }) => {
      expectOk(await api.listAgents({ limit: 1 }, { auth: { header: `${scheme} ${target.keys.main}` } }));
    });

  /**
   * Where to read Remaining: the key's Get bucket (a GET of an agent), and the account's tier,
   * read on an unknown path, which belongs to the tier alone; the refused requests go to the same place.
   */
  const METERS: Array<{
    title: string;
    read: (api: ServiceClient, agentId: string) => Promise<Exchange>;
    refusedOn: EndpointId[];
  }> = [
    {
      title: "the key's Get bucket",
      read: async (api, agentId) => (await api.getAgent(agentId)).exchange,
      refusedOn: ["getAgent"],
    },
    {
      title: "the account's tier bucket",
      read: (api) => api.send({ method: "GET", path: "/no-such-route" }),
      refusedOn: ENDPOINT_LIST.map((e) => e.id),
    },
  ];
  /** Measurements of one meter at most: a drop that repeats takes up to three, another client's moves some more. */
  const MEASUREMENTS = 7;
  for (const meter of METERS)
    check("auth.not-counted", `401 answers leave X-RateLimit-Remaining of ${meter.title} as it was`, async ({ api, agents }) => {
      const agentId = meter.refusedOn.length === 1 ? (await agents.create()).id : FAKE_ID;
      // Remaining is exact only within one window: when one rolls over in between, measure again.
      // Another client of the account spends the tier (and a key's bucket) too: each measurement is
      // bracketed by two pairs of readings, each pair exactly one reading's step apart, and a drop is
      // a finding only once it repeats in proportion to the refusals (counted refusals drop Remaining
      // in proportion to their number; another client's requests do not): the second measurement
      // sends twice the refusals where the bucket has room, else half of them
      const base = meter.refusedOn.length * REFUSED.length;
      const moved: string[] = [];
      /** drops seen, each with the refusals that came before it, until they confirm or clear a drop */
      let drops: { drop: number; refused: number }[] = [];
      let oddStep: number | undefined;
      /** measurements the bucket had no room for */
      const short: string[] = [];
      for (let attempt = 1; attempt <= MEASUREMENTS; attempt++) {
        const first = await meter.read(api, agentId);
        const r0 = rateOf(first);
        // the measurement that confirms a drop sends another number of refusals: twice as many where
        // the bucket has room, else those to half the endpoints (the tier's meter: 42 at a tier of 60)
        // (a drop seen after another number of refusals is confirmed by all of them)
        const other = drops.at(-1)?.refused === base;
        const doubled = other && r0.remaining >= 2 * base + 3;
        const halved = other && !doubled && meter.refusedOn.length > 1;
        const endpoints = halved ? meter.refusedOn.slice(0, Math.ceil(meter.refusedOn.length / 2)) : meter.refusedOn;
        const times = doubled ? 2 : 1;
        const sending = times * endpoints.length * REFUSED.length;
        // never judged on a refused reading: the three readings left and every refusal fit in what is
        // left of the bucket, and (STYLE §12) the five round trips in what is left of the window, on
        // the round trip just measured (Reset is rounded up: up to 1 s of it may be gone); otherwise
        // start in the next window
        // (a drop to confirm on one endpoint needs room for twice its refusals)
        const confirmable = !other || doubled || halved;
        if (first.response.status === 429 || r0.remaining < sending + 3 || !confirmable) {
          short.push(`${r0.remaining} left, ${(confirmable ? sending : 2 * base) + 3} needed`);
          if (attempt < MEASUREMENTS) await waitForRefill(first);
          continue;
        }
        if (attempt < MEASUREMENTS && r0.reset * 1000 - 1000 - first.receivedAt < 5 * first.durationMs + 250) {
          await waitForRefill(first);
          continue;
        }
        const r1 = rateOf(await meter.read(api, agentId));
        // all at once: one round trip, so the readings fit in one window far from the service too
        const refusals = endpoints.flatMap((endpoint) =>
          Array.from({ length: times }, () => REFUSED)
            .flat()
            .map(({ auth }) => callAs(api, endpoint, { agentId, agents, auth, pace: false })),
        );
        for (const res of await Promise.all(refusals)) expectError(res, "UNAUTHORIZED");
        const r2 = rateOf(await meter.read(api, agentId));
        const r3 = rateOf(await meter.read(api, agentId));
        if (r0.reset !== r3.reset || r0.limit !== r3.limit) continue;
        // what one reading costs: 1, or 0 where a request to no route counts nowhere
        const step = r0.remaining - r1.remaining;
        if (r2.remaining - r3.remaining !== step) {
          moved.push(`${r0.remaining} → ${r1.remaining} … ${r2.remaining} → ${r3.remaining}`);
          continue;
        }
        if (![0, 1].includes(step)) {
          // the same odd step in two measurements is the service's, not a neighbour's
          if (oddStep === step) expect([0, 1], "Remaining taken by one reading (the same in two measurements)").toContain(step);
          oddStep = step;
          moved.push(`one reading took ${step}`);
          continue;
        }
        const refused = refusals.length;
        const drop = r1.remaining - step - r2.remaining;
        // none counted of half the endpoints clears nothing (the other half may count): all of them again
        if (drop === 0 && halved) {
          drops = [];
          continue;
        }
        const last = drops.at(-1);
        // in proportion to the refusals, as the one before it: a neighbour's requests would not be
        const inStep = last !== undefined && drop * last.refused === last.drop * refused;
        if (drop !== 0 && !inStep) drops = [];
        if (drop !== 0) drops.push({ drop, refused });
        // a drop twice, in proportion to two different numbers of refusals (the same drop after the
        // same refusals proves nothing: a neighbour polling in step with the measurement repeats too)
        const confirmed = drops.length === 2 && drops[1]!.refused !== drops[0]!.refused;
        if (drops.length === 2 && !confirmed) drops = [drops[1]!];
        if (drop !== 0 && !confirmed) {
          if (!inStep && last)
            moved.push(`${last.drop} fewer left after ${last.refused} refusals, then ${drop} after ${refused}`);
          continue;
        }
        expect(
          r2.remaining,
          `Remaining after ${refused} refused requests and one reading${drop ? ` (${drops.map((d) => `${d.drop} fewer after ${d.refused}`).join(", ")})` : ""}`,
        ).toBe(r1.remaining - step);
        return;
      }
      if (moved.length || drops.length)
        throw new Inconclusive(
          `another client's activity in the account moved X-RateLimit-Remaining between readings no request of this check came between (${[...moved, ...drops.map((d) => `${d.drop} fewer after ${d.refused} refusals, not seen again`)].join("; ")})`,
        );
      throw new HarnessError(
        `X-RateLimit-Reset or -Limit changed between the readings, or the bucket had no room for the measurement, in each of ${MEASUREMENTS} attempts${short.length ? ` (${short.join("; ")})` : ""}`,
      );
    });
});

/** X-RateLimit-* of an authenticated answer (the automatic checks assert their presence). */
function rateOf(ex: Exchange): { limit: number; remaining: number; reset: number } {
  const { limit, remaining, reset } = ex.rate ?? {};
  if (limit === undefined || remaining === undefined || reset === undefined)
    throw new HarnessError(`${ex.request.method} ${ex.request.url} answered without rate headers`);
  return { limit, remaining, reset };
}

describe("403 FORBIDDEN (a read-only key)", () => {
  const WRITES: EndpointId[] = ["createAgent", "updateAgent", "deleteAgent", "sendMessage"];
  for (const endpoint of WRITES) {
    const spec = ENDPOINT_LIST.find((e) => e.id === endpoint)!;
    check(
      "auth.permissions",
      `${spec.method} ${spec.path} lacking ${spec.permission} → 403, nothing changes`,
      async ({ api, readOnlyApi, agents }) => {
        if (endpoint === "createAgent") {
          const name = agents.name();
          const res = await readOnlyApi.createAgent({ name });
          if (res.status === 201 && res.data) agents.track(res.data.id);
          expectError(res, "FORBIDDEN");
          // a create would be the newest agent: the first page newest-first would hold it
          const newest = expectOk(await api.listAgents({ limit: LIST_LIMITS.limit.max, sortBy: "createdAt", order: "desc" }));
          expect(
            newest.map((a) => a.name),
            "agents after the refused create",
          ).not.toContain(name);
          return;
        }
        const agent = await agents.create();
        const userId = `u-${agent.id}`;
        const res =
          endpoint === "sendMessage"
            ? await readOnlyApi.sendMessage(agent.id, { text: "hello", userId })
            : await callAs(readOnlyApi, endpoint, { agentId: agent.id, agents });
        expectError(res, "FORBIDDEN");
        expect(expectOk(await api.getAgent(agent.id)), "the agent after the refused request").toEqual(agent);
        // the refused message took no turn in the (agent, userId) conversation
        if (endpoint === "sendMessage") expect(expectOk(await api.sendMessage(agent.id, { text: "hello", userId })).turn).toBe(1);
      },
    );
  }

  smoke("auth.permissions", "agents:read is enough to list and get", async ({ readOnlyApi, agents }) => {
    const agent = await agents.create();
    expect(expectOk(await readOnlyApi.getAgent(agent.id))).toEqual(agent);
    expect(Array.isArray(expectOk(await readOnlyApi.listAgents({ limit: 1 })))).toBe(true);
  });
});

describe("isolation between accounts", () => {
  const PATHS: EndpointId[] = ["getAgent", "updateAgent", "deleteAgent", "sendMessage"];
  check(
    "auth.isolation",
    "another account gets 404 AGENT_NOT_FOUND on every path of an agent, never 403",
    async ({ api, otherApi, agents }) => {
      const agent: Agent = await agents.create();
      for (const endpoint of PATHS)
        expectError(await callAs(otherApi, endpoint, { agentId: agent.id, agents }), "AGENT_NOT_FOUND");
      const listed = [];
      for (let page = 1; page <= 200; page++) {
        const res = await otherApi.listAgents({ limit: LIST_LIMITS.limit.max, page });
        listed.push(...(expectOk(res) ?? []).map((a) => a.id));
        if (!res.pagination?.hasMore) break;
      }
      expect(listed, "the other account's listing").not.toContain(agent.id);
      expect(expectOk(await api.getAgent(agent.id)), "the agent after the other account's requests").toEqual(agent);
    },
  );

  // PROFILE §5 from an account that has never had an agent. Mutation testing: a store that
  // looked such an account up unguarded on DELETE (a 500) survived: every account of the run had
  // created an agent before its first DELETE.
  check(
    ["agent.not-found", "get.not-found"],
    "an account that has never had an agent gets 404 AGENT_NOT_FOUND on every path of an unknown id",
    // a target the harness started has an account no check creates in; a deployment's other account
    // may hold agents, and the 404s hold all the same
    async ({ agentlessApi, agents }) => {
      for (const endpoint of PATHS)
        expectError(await callAs(agentlessApi, endpoint, { agentId: FAKE_ID, agents }), "AGENT_NOT_FOUND");
    },
  );
});

describe("keys never appear in a response", () => {
  const other = target.keys.otherAccount;
  const ROWS: Array<{ title: string; send: (api: ServiceClient, key: string, agents: AgentFactory) => Promise<Exchange> }> = [
    {
      title: "the key as X-Request-Id",
      send: async (api, key) => (await api.listAgents({ limit: 1 }, { headers: { [HEADERS.requestId]: key } })).exchange,
    },
    {
      title: "the key as X-Request-Id of a 401",
      send: async (api, key) =>
        (await api.listAgents({ limit: 1 }, { auth: "none", headers: { [HEADERS.requestId]: key } })).exchange,
    },
    { title: "the key as an invalid query value", send: async (api, key) => (await api.listAgents({ limit: key })).exchange },
    { title: "the key as an invalid sortBy", send: async (api, key) => (await api.listAgents({ sortBy: key })).exchange },
    { title: "the key as an unknown query parameter", send: async (api, key) => (await api.listAgents({ [key]: "1" })).exchange },
    {
      title: "the key in malformed JSON",
      send: (api, key, agents) =>
        api.send({ method: "POST", path: "/agents", rawBody: `{"name": "${agents.name()}", "bio": "${key}"` }),
    },
    {
      title: "the key as an invalid field value",
      send: (api, key, agents) => api.send({ method: "POST", path: "/agents", body: { name: agents.name(), status: key } }),
    },
    { title: "the key as an agent id", send: async (api, key) => (await api.getAgent(key)).exchange },
  ];
  // the refusal of a key that lacks a permission is an answer of its own (its error names the
  // permission): it must not name the key either
  check("auth.no-key-echo", "a read-only key refused a write (403) is not echoed", async ({ readOnlyApi, agents }) => {
    const { exchange } = await readOnlyApi.createAgent({ name: agents.name() });
    expect(exchange.leaks, "the 403's answer: where the read-only key came back").toEqual([]);
  });

  for (const { title, send } of ROWS)
    check("auth.no-key-echo", `${title} is not echoed`, async ({ api, agents }) => {
      for (const key of [target.keys.main, ...(other ? [other] : [])]) {
        const ex = await send(api, key, agents);
        expect(ex.leaks, `${title} (${key === target.keys.main ? "own" : "another account's"} key): where it came back`).toEqual(
          [],
        );
      }
    });
});
