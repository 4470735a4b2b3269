import { describe } from "vitest";
import { resetBounds } from "../../src/checks/rate-limit-headers.js";
import type { Exchange } from "../../src/client/index.js";
import { ENDPOINTS, errorEnvelopeSchema, HEADERS, isConformantPair, RATE_LIMITS } from "../../src/contract/index.js";
import { declareFile } from "../support/declare-file.js";
import { check, expect, expectOk, SERVICE_CLOCK, smoke, target } from "../support/harness.js";

declareFile({ sendsMessages: true, readsRemainingAcrossAnswers: true });

/*
 * The response-level checks (src/checks) already hold every answer of every suite to these
 * clauses; the checks below exercise each endpoint on purpose, so the clauses are verified
 * even in a run narrowed with --sections.
 */

const bodyOf = (ex: Exchange) => ex.response.json as Record<string, unknown>;

describe("§2 envelopes", () => {
  smoke("envelope.success", "every endpoint's success is {success: true, data: <object>}", async ({ api, agents }) => {
    const agent = await agents.create();
    const sent = await api.sendMessage(agent.id, { text: "hello" });
    // a deployment's own model may fail it (PROFILE §5): then this check has no success to read
    expect(sent).toAnswer(200);
    const answers = [
      (await api.getAgent(agent.id)).exchange,
      (await api.updateAgent(agent.id, { bio: "envelope" })).exchange,
      sent.exchange,
      (await api.listAgents({ limit: 1 })).exchange,
    ];
    for (const ex of answers) {
      expect(ex.response.status, ex.request.url).toBeLessThan(300);
      expect(bodyOf(ex).success, ex.request.url).toBe(true);
      expect(typeof bodyOf(ex).data, ex.request.url).toBe("object");
      expect(bodyOf(ex).data, ex.request.url).not.toBeNull();
    }
    const deleted = await api.deleteAgent(agent.id);
    agents.forget(agent.id);
    expect(expectOk(deleted)).toEqual({ id: agent.id, deleted: true });
  });

  smoke(
    ["envelope.error", "status.pairing"],
    "every kind of error is {success: false, error: {code, message}} with a code of its status",
    async ({ api }) => {
      const answers = [
        (await api.createAgent({ name: "" })).exchange, // 400
        (await api.listAgents({ limit: "0" })).exchange, // 400 naming limit
        (await api.getAgent("agt_envelope_missing")).exchange, // 404 AGENT_NOT_FOUND
        await api.send({ method: "GET", path: "/no-such-route" }), // 404 NOT_FOUND
        await api.send({ method: "GET", path: ENDPOINTS.listAgents.path, auth: "none" }), // 401
        await api.send({ method: "POST", path: ENDPOINTS.createAgent.path, rawBody: "{", contentType: "application/json" }), // 400
      ];
      for (const ex of answers) {
        const parsed = errorEnvelopeSchema.safeParse(ex.response.json);
        expect(parsed.success, `${ex.request.method} ${ex.request.url}: ${ex.response.bodyText.slice(0, 200)}`).toBe(true);
        if (parsed.success) expect(isConformantPair(ex.response.status, parsed.data.error.code), ex.request.url).toBe(true);
      }
      const limitFault = (await api.listAgents({ limit: "0" })).error;
      expect(limitFault?.details?.map((d) => d.field)).toContain("limit");
    },
  );
});

/** Inputs a careless server answers with a 5xx: each must get a 4xx (or a success) instead. */
const ODD_INPUTS: { title: string; method: string; path: string; rawBody?: string; contentType?: string }[] = [
  { title: "deeply nested JSON", method: "POST", path: "/agents", rawBody: `${"[".repeat(5000)}${"]".repeat(5000)}` },
  {
    title: "a number beyond every range",
    method: "POST",
    path: "/agents",
    rawBody: '{"name":"x","modelSettings":{"temperature":1e400}}',
  },
  { title: "duplicate keys", method: "POST", path: "/agents", rawBody: '{"name":"a","name":{"x":1}}' },
  { title: "a lone surrogate escape", method: "POST", path: "/agents", rawBody: '{"name":"\\ud800"}' },
  { title: "bytes that are not UTF-8", method: "POST", path: "/agents", rawBody: '{"name":"\xff\xfe"}' },
  { title: "an array where an object goes", method: "POST", path: "/agents", rawBody: '{"name":"x","personality":[1,2]}' },
  {
    title: "a string where a number goes",
    method: "POST",
    path: "/agents",
    rawBody: '{"name":"x","modelSettings":{"maxTokens":"9"}}',
  },
  { title: "__proto__ as a key", method: "POST", path: "/agents", rawBody: '{"name":"x","__proto__":{"admin":true}}' },
  { title: "a query with a huge page", method: "GET", path: "/agents?page=99999999999999999999999" },
  { title: "a page and limit that are not numbers", method: "GET", path: "/agents?page=abc&limit=x" },
  { title: "a query with odd encodings", method: "GET", path: "/agents?status=%00&sortBy=%E2%82%AC" },
  { title: "an id of odd characters", method: "GET", path: "/agents/%00%01%7F" },
  {
    title: "a message with a charset parameter",
    method: "POST",
    path: "/agents/agt_missing/messages",
    rawBody: '{"text":"x"}',
    contentType: "application/json; charset=utf-16",
  },
];

describe("§3 no 5xx for client input", () => {
  for (const input of ODD_INPUTS)
    check("status.no-5xx-on-input", `${input.title} is not answered with a 5xx`, async ({ api, agents }) => {
      const ex = await api.send({
        method: input.method,
        path: input.path,
        ...(input.rawBody !== undefined ? { rawBody: Buffer.from(input.rawBody, "latin1") } : {}),
        ...(input.rawBody !== undefined ? { contentType: input.contentType ?? "application/json" } : {}),
      });
      const created = (ex.response.json as { data?: { id?: string } } | undefined)?.data?.id;
      if (ex.response.status === 201 && created) agents.track(created);
      expect(ex.response.status, `${input.method} ${input.path}`).toBeLessThan(500);
    });
});

describe("§7 rate-limit headers", () => {
  smoke("limits.headers", "2xx and 4xx answers carry X-RateLimit-Limit/Remaining/Reset within W + 1 s", async ({ api }) => {
    const answers = [
      (await api.listAgents({ limit: 1 })).exchange,
      (await api.getAgent("agt_headers_missing")).exchange,
      (await api.listAgents({ limit: "abc" })).exchange,
      await api.send({ method: "GET", path: "/no-such-route" }),
    ];
    for (const ex of answers) {
      const label = `${ex.response.status} ${ex.request.url}`;
      const limit = Number(ex.response.headers[HEADERS.limit]);
      const remaining = Number(ex.response.headers[HEADERS.remaining]);
      const reset = Number(ex.response.headers[HEADERS.reset]);
      expect(Number.isInteger(limit) && limit >= 1, `${label}: ${HEADERS.limit}`).toBe(true);
      expect(Number.isInteger(remaining) && remaining >= 0 && remaining <= limit, `${label}: ${HEADERS.remaining}`).toBe(true);
      // PROFILE §7 Reset is on the service's clock (its offset estimated from its Date header), and
      // "now" is anywhere from the request's sending to its answer's arrival: a slow hop between
      const bounds = resetBounds({
        sentAt: ex.sentAt,
        receivedAt: ex.receivedAt,
        offsetSeconds: SERVICE_CLOCK.offsetSeconds,
        windowSeconds: target.windowSeconds,
        skewSeconds: SERVICE_CLOCK.toleranceSeconds,
      });
      expect(reset, `${label}: ${HEADERS.reset} after now`).toBeGreaterThan(bounds.after);
      expect(reset, `${label}: ${HEADERS.reset} at most W + 1 s ahead`).toBeLessThanOrEqual(Math.ceil(bounds.atMost));
    }
    // PROFILE §7: a List answer describes the bucket with the fewest left of the two it is counted
    // in, the key's List bucket and the account's tier: either may be it (a tier larger than the
    // List bucket can have fewer left, spent by earlier checks or another client), no other. With
    // no tier given, the tier's size is unknown: any size may be it
    const listLimit = Number(answers[0]!.response.headers[HEADERS.limit]);
    if (target.tierLimit !== undefined)
      expect([RATE_LIMITS.perKeyEndpoint.listAgents, target.tierLimit], `${HEADERS.limit} of a List answer`).toContain(listLimit);
  });
});
