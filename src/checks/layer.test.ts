import { describe, expect, test } from "vitest";
import type { Exchange } from "../client/exchange.js";
import { outgoing, scripted } from "../client/layers/test-support.js";
import { NO_LITERALS } from "../client/literals.js";
import type { Violation } from "./define.js";
import { responseChecks } from "./layer.js";

const context = { authenticated: true, keys: [], tokens: NO_LITERALS, windowSeconds: 60, clockSkewSeconds: 2 };

describe("the response-check layer", () => {
  test("reports what the registry's checks find in an exchange passing through, and only that", async () => {
    const found: Array<[Exchange, Violation[]]> = [];
    const layer = responseChecks({ baseUrl: "http://127.0.0.1:9/v1", context, onJudged: (ex, v) => found.push([ex, v]) });
    // PROFILE §3: 404 pairs with AGENT_NOT_FOUND or NOT_FOUND, never with a 400 code
    const body = '{"success":false,"error":{"code":"INVALID_REQUEST","message":"x"}}';
    const outcome = await layer(scripted([{ status: 404, headers: { "content-type": "application/json" }, body }]))(
      outgoing({ path: "/v1/agents/agt_1" }),
    );
    expect(outcome.exchange.response.status, "the exchange passes through unchanged").toBe(404);
    expect(found.flatMap(([, v]) => v.map((x) => x.clause))).toContain("status.pairing");
  });
});
