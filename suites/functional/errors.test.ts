import { describe } from "vitest";
import type { ApiResult, AuthMode, Exchange, ServiceClient } from "../../src/client/index.js";
import { BODY_LIMIT_BYTES, ENDPOINT_LIST, ENDPOINTS, type EndpointId } from "../../src/contract/index.js";
import { declareFile } from "../support/declare-file.js";
import { type AgentFactory, check, expect, expectError, expectOk, sharedAgent } from "../support/harness.js";

declareFile({ sendsMessages: true });

/* PROFILE §3 precedence, §7 sizes and content types, §9 routing. */

/** What the rows below use of a check's fixtures. */
interface Fixtures {
  api: ServiceClient;
  agents: AgentFactory;
}

/**
 * One agent for the rows below, which leave it as it is: made on first use (inside a check, so
 * its exchange is checked too) and deleted after the file. Saves a create per row (PROFILE §7: 10 a window).
 */
const shared = sharedAgent("errors");

/** The endpoints with a body, each with a body it would accept. */
const BODY_ENDPOINTS: Array<{ id: EndpointId; body: (agents: AgentFactory) => Record<string, unknown> }> = [
  { id: "createAgent", body: (agents) => ({ name: agents.name() }) },
  { id: "updateAgent", body: () => ({ bio: "still valid" }) },
  { id: "sendMessage", body: () => ({ text: "hello" }) },
];

/** Send to one of the body endpoints; a create that should have failed but did not is cleaned up. */
async function sendBody(
  { api, agents }: Fixtures,
  endpoint: EndpointId,
  input: { rawBody?: string; contentType?: string | null; auth?: AuthMode },
): Promise<ApiResult<unknown>> {
  const agentId = endpoint === "createAgent" ? undefined : (await shared()).id;
  const res = await api.call(endpoint, { ...(agentId ? { agentId } : {}), ...input });
  const created = res.status === 201 ? (res.data as { id?: string } | undefined)?.id : undefined;
  if (created) agents.track(created);
  return res;
}

/** `json` padded with whitespace before its closing brace to exactly `bytes` bytes of UTF-8: valid JSON. */
function padded(json: Record<string, unknown>, bytes: number): string {
  const text = JSON.stringify(json);
  const size = Buffer.byteLength(text, "utf8");
  if (size > bytes) throw new Error(`${size} bytes already`);
  return `${text.slice(0, -1)}${" ".repeat(bytes - size)}}`;
}

/** Bodies that are not JSON, built from one that would be accepted. */
const MALFORMED: Array<{ title: string; make: (valid: string) => string }> = [
  { title: "truncated", make: (v) => v.slice(0, -1) },
  { title: "trailing garbage", make: (v) => `${v} x` },
  { title: "single quotes", make: (v) => v.replaceAll('"', "'") },
  { title: "a trailing comma", make: (v) => `${v.slice(0, -1)},}` },
  { title: "empty", make: () => "" },
];

/** JSON that is not an object. */
const NOT_OBJECTS: Array<{ title: string; make: (valid: string) => string }> = [
  { title: "[]", make: () => "[]" },
  { title: '"x"', make: () => '"x"' },
  { title: "1", make: () => "1" },
  { title: "null", make: () => "null" },
  { title: "true", make: () => "true" },
  { title: "[<a valid body>]", make: (v) => `[${v}]` },
];

/** Create counts in a bucket of 10 a window even when rejected: it gets a few representative rows. */
const CREATE_ROWS = new Set(["truncated", "empty", "[]", "null"]);

describe("request bodies (§7)", () => {
  for (const { id, body } of BODY_ENDPOINTS) {
    const spec = ENDPOINTS[id];
    const label = `${spec.method} ${spec.path}`;

    check("limits.body-size", `${label}: a body of ${BODY_LIMIT_BYTES + 1} bytes → 400 or 413`, async ({ api, agents }) => {
      const res = await sendBody({ api, agents }, id, { rawBody: padded(body(agents), BODY_LIMIT_BYTES + 1) });
      expectError(res, ["INVALID_REQUEST", "PAYLOAD_TOO_LARGE"]);
    });

    if (id !== "createAgent")
      check(
        "limits.body-size",
        `${label}: a body of exactly ${BODY_LIMIT_BYTES} bytes is not refused for size`,
        async ({ api, agents }) => {
          const res = await sendBody({ api, agents }, id, { rawBody: padded(body(agents), BODY_LIMIT_BYTES) });
          expect(res.exchange.request.bodyBytes).toBe(BODY_LIMIT_BYTES);
          expectOk(res, spec.successStatus);
        },
      );

    for (const contentType of [null, "text/plain"])
      check("limits.content-type", `${label}: Content-Type ${contentType ?? "absent"} → 400 or 415`, async ({ api, agents }) => {
        const res = await sendBody({ api, agents }, id, { rawBody: JSON.stringify(body(agents)), contentType });
        expect(res.exchange.request.headers["content-type"]).toBe(contentType ?? undefined);
        expectError(res, ["INVALID_REQUEST", "UNSUPPORTED_MEDIA_TYPE"]);
      });

    for (const { title, make } of [...MALFORMED, ...NOT_OBJECTS]) {
      if (id === "createAgent" && !CREATE_ROWS.has(title)) continue;
      const kind = MALFORMED.some((m) => m.title === title) ? "malformed JSON" : "JSON not an object";
      check("limits.content-type", `${label}: ${kind} (${title}) → 400`, async ({ api, agents }) => {
        expectError(await sendBody({ api, agents }, id, { rawBody: make(JSON.stringify(body(agents))) }), "INVALID_REQUEST");
      });
    }
  }
});

/** Paths under {base_url} no route has; `{id}` is an existing agent. */
const UNKNOWN_PATHS = ["/nope", "/agents-all", "/health", "/v1/agents", "/agents/{id}/nope", "/agents/{id}/messages/extra"];

/** Known paths with a method they lack. */
const LACKING_METHODS: Array<{ method: string; path: string }> = [
  { method: "PUT", path: "/agents" },
  { method: "PATCH", path: "/agents" },
  { method: "DELETE", path: "/agents" },
  { method: "POST", path: "/agents/{id}" },
  { method: "PUT", path: "/agents/{id}" },
  { method: "GET", path: "/agents/{id}/messages" },
  { method: "DELETE", path: "/agents/{id}/messages" },
  // a method no route has at all (an outside fuzzer found the reference answering 400)
  { method: "QUERY", path: "/agents" },
  { method: "QUERY", path: "/agents/{id}" },
];

/** `/agents/` with an empty id, on each method of the agent paths. */
const EMPTY_IDS: Array<{ method: string; path: string; body?: unknown }> = [
  { method: "GET", path: "/agents/" },
  { method: "PATCH", path: "/agents/", body: {} },
  { method: "DELETE", path: "/agents/" },
  { method: "POST", path: "/agents//messages", body: { text: "hello" } },
];

const withId = async (path: string) => (path.includes("{id}") ? path.replace("{id}", (await shared()).id) : path);

/** The methods a path pattern has, from the endpoint table. */
function methodsOf(path: string): string[] {
  const pattern = path.replace("{id}", ":agentId");
  return ENDPOINT_LIST.filter((e) => e.path === pattern).map((e) => e.method);
}

describe("routing (§9)", () => {
  for (const path of UNKNOWN_PATHS)
    check("routing.unknown", `GET ${path} → 404 NOT_FOUND`, async ({ api }) => {
      const ex = await api.send({ method: "GET", path: await withId(path) });
      expectError(resultOf(ex), "NOT_FOUND");
    });

  for (const { method, path } of LACKING_METHODS)
    check("routing.unknown", `${method} ${path} → 404 NOT_FOUND or 405 with Allow`, async ({ api }) => {
      const hasBody = method === "POST" || method === "PUT" || method === "PATCH";
      const ex = await api.send({ method, path: await withId(path), ...(hasBody ? { body: {} } : {}) });
      expectError(resultOf(ex), ["NOT_FOUND", "METHOD_NOT_ALLOWED"]);
      if (ex.response.status === 405) {
        const allow = (ex.response.headers.allow ?? "").split(",").map((m) => m.trim().toUpperCase());
        expect(allow, "Allow lists the path's methods").toEqual(expect.arrayContaining(methodsOf(path)));
        expect(allow, "Allow leaves out the method refused").not.toContain(method);
      }
    });

  check("routing.unknown", "QUERY /nope (a method no route has, on an unknown path) → 404 NOT_FOUND", async ({ api }) => {
    expectError(resultOf(await api.send({ method: "QUERY", path: "/nope" })), "NOT_FOUND");
  });

  // a percent-encoding that does not decode is still a path under {base_url}: routed (404, in the
  // envelope, after auth), not refused by a framework before any of that (a mutant that did so survived)
  for (const path of ["/agents/%zz", "/agents/%E0%A4%A", "/agents%zz"])
    check(
      ["routing.variants", "routing.unknown"],
      `GET ${path} (percent-encoding that does not decode) → 404`,
      async ({ api }) => {
        expectError(resultOf(await api.send({ method: "GET", path })), ["NOT_FOUND", "AGENT_NOT_FOUND"]);
      },
    );

  for (const { method, path, body } of EMPTY_IDS)
    check("routing.empty-id", `${method} ${path} → 404`, async ({ api }) => {
      const ex = await api.send({ method, path, ...(body ? { body } : {}) });
      expectError(resultOf(ex), ["NOT_FOUND", "AGENT_NOT_FOUND"]);
    });
});

/** Requests with several faults besides the missing key; `{id}` is an existing agent. */
const UNAUTHENTICATED_AND_WRONG: Array<{
  title: string;
  /** besides status.precedence and auth.required */
  clause?: "routing.unknown" | "routing.empty-id";
  method: string;
  path: string;
  query?: string;
  rawBody?: string;
  contentType?: string;
}> = [
  { title: "an unknown path", clause: "routing.unknown", method: "GET", path: "/nope" },
  { title: "a method the path lacks", clause: "routing.unknown", method: "PUT", path: "/agents", rawBody: "{}" },
  { title: "an empty id", clause: "routing.empty-id", method: "DELETE", path: "/agents/" },
  { title: "an unknown agent", method: "GET", path: "/agents/agt_doesnotexist000" },
  { title: "an invalid query", method: "GET", path: "/agents", query: "limit=0&page=abc" },
  { title: "malformed JSON", method: "POST", path: "/agents", rawBody: '{"name": ' },
  { title: "JSON not an object", method: "PATCH", path: "/agents/{id}", rawBody: "[]" },
  { title: "text/plain", method: "POST", path: "/agents/{id}/messages", rawBody: '{"text":"hi"}', contentType: "text/plain" },
  { title: "an oversized body", method: "PATCH", path: "/agents/{id}", rawBody: padded({ bio: "x" }, BODY_LIMIT_BYTES + 1) },
  { title: "an invalid field", method: "POST", path: "/agents", rawBody: '{"name": "", "status": "error"}' },
];

describe("precedence (§3)", () => {
  for (const row of UNAUTHENTICATED_AND_WRONG)
    check(
      ["status.precedence", "auth.required", ...(row.clause ? [row.clause] : [])],
      `no key or an unknown key and ${row.title} → 401`,
      async ({ api }) => {
        for (const auth of ["none", { header: `Bearer ak_unknown${"0".repeat(32)}` }] as const) {
          const ex = await api.send({
            method: row.method,
            path: await withId(row.path),
            ...(row.query ? { query: row.query } : {}),
            ...(row.rawBody !== undefined ? { rawBody: row.rawBody } : {}),
            ...(row.contentType ? { contentType: row.contentType } : {}),
            auth,
          });
          expectError(resultOf(ex), "UNAUTHORIZED");
        }
      },
    );
});

/** The error of a raw exchange, for expectError. */
function resultOf(ex: Exchange): { status: number; error?: { code: string; details?: { field: string }[] }; exchange: Exchange } {
  const error = (ex.response.json as { error?: { code?: unknown; details?: { field: string }[] } } | undefined)?.error;
  return {
    status: ex.response.status,
    ...(typeof error?.code === "string"
      ? { error: { code: error.code, ...(error.details ? { details: error.details } : {}) } }
      : {}),
    exchange: ex,
  };
}
