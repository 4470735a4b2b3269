import { describe, expect, test } from "vitest";
import { paginationFor } from "../contract/index.js";
import { shoot } from "./burst.js";
import { ScenarioContext } from "./context.js";
import { LoadRecorder } from "./recorder.js";
import { requestTo } from "./requests.js";
import { deploymentAt, serveDuringTests } from "./test-support.js";

const KEY = "ak_test_loadconformance_0001";

/**
 * A target that answers every list with a valid envelope but no X-Request-Id (PROFILE §1) and
 * echoes the key in a header (PROFILE §6): both response-level findings, whoever sent the request.
 */
const served = serveDuringTests((req, res) => {
  res.writeHead(200, {
    "content-type": "application/json",
    "x-ratelimit-limit": "1000",
    "x-ratelimit-remaining": "999",
    "x-ratelimit-reset": String(Math.ceil(Date.now() / 1000) + 60),
    "x-echo": req.headers.authorization ?? "",
  });
  res.end(JSON.stringify({ success: true, data: [], pagination: paginationFor(1, 1, 0) }));
});

const targetAt = (url: string) => deploymentAt(url, { keys: { main: KEY } });

describe("conformance under load", () => {
  test("the harness's own requests and autocannon's answers go through verify's response checks: one finding per defect", async () => {
    const target = targetAt(served.baseUrl);
    const recorder = new LoadRecorder(target, "conformance");
    const ctx = new ScenarioContext(target, recorder, new AbortController().signal);
    const list = requestTo("listAgents", { query: { limit: "1" } });
    await ctx.single(KEY, list);
    await shoot({ ...ctx.generator(KEY), request: list, connections: 2, amount: 20 });
    await ctx.cleanup();

    // the checks' findings are observations, as in every suite; the scenario itself asserted nothing
    expect(recorder.failures).toEqual([]);
    expect(recorder.conformance).toMatchObject({ responses: 21, checked: 21, sampling: "every response" });
    // the evidence a report shows went through the redaction layer: the key is nowhere in it
    const observations = recorder.observations;
    expect(observations.map((o) => [o.check, o.count, o.endpoint]).sort()).toEqual([
      ["no-key-in-response", 21, "GET /agents"],
      ["request-id", 21, "GET /agents"],
    ]);
    expect(JSON.stringify(observations)).not.toContain(KEY);
    expect(observations[0]?.evidence.curl).toContain("$AGENT_API_KEY");
    // the load account's key is read from its own variable: a replay sends that key
    const loadTarget = { ...target, keys: { main: "ak_test_other_main_0001", load: KEY } };
    const loadRecorder = new LoadRecorder(loadTarget, "variable");
    const loadCtx = new ScenarioContext(loadTarget, loadRecorder, new AbortController().signal);
    await loadCtx.single(KEY, list);
    await loadCtx.cleanup();
    loadRecorder.generatorHealth();
    expect(loadRecorder.observations[0]?.evidence.curl).toContain("$AGENT_API_LOAD_KEY");
  });
});

describe("sampling at high rates", () => {
  test("the generator's first 1,000 answers of each endpoint are all checked, then one in ten; the report says so", () => {
    const recorder = new LoadRecorder(targetAt("http://127.0.0.1:9/v1"), "sampling");
    let chosen = 0;
    const list = { endpoint: "GET /agents", status: 200 };
    for (let i = 0; i < 1000; i++) if (recorder.sampled(list)) chosen++;
    expect(recorder.conformance.sampling).toBe("every response");
    for (let i = 0; i < 5000; i++) if (recorder.sampled(list)) chosen++;
    // the next endpoint starts with its own 1,000: the first one driven does not take them all
    for (let i = 0; i < 1000; i++) if (recorder.sampled({ endpoint: "GET /agents/{agentId}", status: 200 })) chosen++;
    // PROFILE §3: a 5xx is a defect wherever it comes, so every one is checked past the sample
    for (let i = 0; i < 10; i++) if (recorder.sampled({ ...list, status: 503 })) chosen++;
    recorder.generatorHealth();
    expect(chosen).toBe(1000 + 500 + 1000 + 10);
    expect(recorder.conformance.sampling).toMatch(/first 1000 per endpoint, then 1 in 10/);
  });
});
