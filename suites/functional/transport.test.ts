import { describe } from "vitest";
import type { Exchange, ServiceClient } from "../../src/client/index.js";
import { HEADERS } from "../../src/contract/index.js";
import { declareFile } from "../support/declare-file.js";
import { loadBoundaries } from "../support/fixtures.js";
import { check, expect, expectOk, target } from "../support/harness.js";

declareFile({});

const requestIds = loadBoundaries<{ echoed: string[]; replaced: string[] }>("request-ids.json");

/** A header value as a client puts it on the wire: non-ASCII text as its UTF-8 bytes. */
const onTheWire = (value: string) => Buffer.from(value, "utf8").toString("latin1");

/** Responses of each kind a client meets: success, 400, 401, 404 of an agent path, 404 of no route. */
const KINDS: Array<{ title: string; send: (api: ServiceClient) => Promise<Exchange> }> = [
  { title: "200 (list)", send: async (api) => (await api.listAgents({ limit: 1 })).exchange },
  { title: "400 (invalid query)", send: async (api) => (await api.listAgents("limit=0")).exchange },
  { title: "401 (no key)", send: async (api) => (await api.listAgents({}, { auth: "none" })).exchange },
  { title: "404 AGENT_NOT_FOUND", send: async (api) => (await api.getAgent("agt_doesnotexist000")).exchange },
  { title: "404 NOT_FOUND", send: (api) => api.send({ method: "GET", path: "/no-such-route" }) },
];

const STATUS_OF_KIND = [200, 400, 401, 404, 404];

describe("transport", () => {
  KINDS.forEach((kind, i) => {
    check("transport.request-id", `a ${kind.title} answer carries X-Request-Id`, async ({ api }) => {
      const ex = await kind.send(api);
      expect(ex.response.status).toBe(STATUS_OF_KIND[i]);
      expect(ex.response.headers[HEADERS.requestId] ?? "", "X-Request-Id").toMatch(/\S/);
    });

    check("transport.json-content-type", `a ${kind.title} answer is application/json`, async ({ api }) => {
      const ex = await kind.send(api);
      expect(ex.response.status).toBe(STATUS_OF_KIND[i]);
      expect(ex.response.headers["content-type"], "Content-Type").toMatch(/^application\/json\s*(;|$)/i);
    });
  });

  describe("client X-Request-Id (fixtures/boundaries/request-ids.json)", () => {
    for (const id of requestIds.echoed)
      check("transport.request-id-echo", `${JSON.stringify(id.slice(0, 20))} (${id.length} chars) is echoed`, async ({ api }) => {
        for (const auth of ["bearer", "none"] as const) {
          const res = await api.listAgents({ limit: 1 }, { auth, headers: { [HEADERS.requestId]: id } });
          expect(res.exchange.response.headers[HEADERS.requestId], `X-Request-Id of a ${res.status}`).toBe(id);
        }
      });

    for (const id of requestIds.replaced)
      check(
        "transport.request-id-echo",
        `${JSON.stringify(id.slice(0, 20))} (${id.length} chars) is replaced by a server-made id`,
        async ({ api }) => {
          const sent = onTheWire(id);
          for (const auth of ["bearer", "none"] as const) {
            const res = await api.listAgents({ limit: 1 }, { auth, headers: { [HEADERS.requestId]: sent } });
            const got = res.exchange.response.headers[HEADERS.requestId];
            expect(got ?? "", `X-Request-Id of a ${res.status}`).toMatch(/\S/);
            expect(got, `X-Request-Id of a ${res.status}`).not.toBe(sent);
          }
        },
      );
  });

  check("transport.health", 'GET /health answers 200 {"status":"ok"} without a key', async ({ api, skip }) => {
    if (!target.referenceFaults) skip("needs a reference-compatible target (--reference-faults)");
    const res = await api.health();
    expect(res.exchange.request.headers.authorization, "sent without a key").toBeUndefined();
    expect(expectOk(res)).toEqual({ status: "ok" });
  });
});
