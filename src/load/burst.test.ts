import { describe, expect, test } from "vitest";
import { shoot } from "./burst.js";
import { ScenarioContext } from "./context.js";
import { LoadRecorder } from "./recorder.js";
import { type LoadRequest, requestTo } from "./requests.js";
import { deploymentAt, serveDuringTests } from "./test-support.js";

const KEY = "ak_test_loadshot_00000001";

/** the agent `hang` is never answered (a create admitted as the generator stops); anything else is, at once. */
const served = serveDuringTests((req, res) => {
  if (req.url?.startsWith("/v1/agents/hang")) return;
  res.writeHead(429, { "content-type": "application/json" });
  res.end(JSON.stringify({ success: false, error: { code: "RATE_LIMIT_EXCEEDED", message: "slow down" } }));
});

async function shotAt(request: LoadRequest, options: { durationSeconds: number; warmUpSeconds?: number }) {
  const target = deploymentAt(served.baseUrl, { keys: { main: KEY } });
  const recorder = new LoadRecorder(target, "shot");
  const ctx = new ScenarioContext(target, recorder, new AbortController().signal);
  const result = await shoot({ ...ctx.generator(KEY), request, connections: 2, ...options });
  await ctx.cleanup();
  recorder.generatorHealth();
  return { result, recorder };
}

describe("a timed shot of autocannon", () => {
  test("says how many requests it sent that were never answered: in flight when autocannon stopped", async () => {
    const { result, recorder } = await shotAt(requestTo("getAgent", { agentId: "hang" }), { durationSeconds: 0.2 });
    expect(result.unanswered).toBe(2);
    expect(recorder.conformance.responses).toBe(0);
  });

  test("a warm-up's answers are counted but kept out of the latency figures", async () => {
    const { result, recorder } = await shotAt(requestTo("listAgents"), { durationSeconds: 1, warmUpSeconds: 0.5 });
    // autocannon stops by closing its connections: at most one request each was still in flight
    expect(result.unanswered).toBeLessThanOrEqual(2);
    const measured = recorder.latencySummary()["GET /agents"]?.["429"]?.count ?? 0;
    expect(measured).toBeGreaterThan(0);
    expect(measured).toBeLessThan(recorder.conformance.responses);
  });
});
