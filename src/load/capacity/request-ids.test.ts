import { describe, expect, test } from "vitest";
import { HEADERS, JSON_CONTENT_TYPE, SSE_CONTENT_TYPE } from "../../contract/index.js";
import { ScenarioContext } from "../context.js";
import { LoadRecorder } from "../recorder.js";
import { deploymentAt, serveDuringTests } from "../test-support.js";
import { CapacityDrive } from "./drive.js";
import { exampleTenants } from "./plan.js";

/**
 * Capacity's client sends one request at a time on a connection (no pipelining), so an answer
 * that carries another request's id is judged per request: the id it sent against the id echoed.
 * The stand-in answers every request with an id of its own making instead of the client's.
 */
const seen = { withId: 0, streams: 0, streamsWithId: 0 };
let made = 0;
const wrongIds = serveDuringTests((req, res) => {
  const sent = req.headers[HEADERS.requestId];
  if (sent !== undefined) seen.withId++;
  const echoed = { [HEADERS.requestId]: `not-${++made}` };
  if (req.headers.accept === SSE_CONTENT_TYPE) {
    seen.streams++;
    if (sent !== undefined) seen.streamsWithId++;
    res.writeHead(200, { "content-type": SSE_CONTENT_TYPE, ...echoed });
    res.end(`event: done\ndata: ${JSON.stringify({ text: "" })}\n\n`);
    return;
  }
  const status = req.method === "POST" && req.url === "/v1/agents" ? 201 : 200;
  res.writeHead(status, { "content-type": JSON_CONTENT_TYPE, ...echoed });
  res.end(JSON.stringify({ success: true, data: { id: `agent_${made}` } }));
});

describe("capacity judges every answer's X-Request-Id against the id its request sent (PROFILE §1)", () => {
  test("streams and JSON requests alike carry an id; every wrong echo counts in one request-id-echo finding", async () => {
    const tenants = exampleTenants(1, 1, 300);
    const target = deploymentAt(wrongIds.baseUrl, { keys: { main: tenants.keys[0]!.key }, windowSeconds: 1 });
    const recorder = new LoadRecorder(target, "capacity");
    const ctx = new ScenarioContext(target, recorder, new AbortController().signal);
    const drive = new CapacityDrive(ctx, { tenants, share: 0.8, durationSeconds: 1, rampSeconds: 0, profile: "steady" });
    await drive.setUp();
    await drive.run();
    await ctx.cleanup();
    expect(seen.streams).toBeGreaterThan(0);
    expect(seen.streamsWithId).toBe(seen.streams);
    const echoFindings = recorder.observations.filter((o) => o.check === "request-id-echo");
    expect(echoFindings.map((o) => [o.clause, o.count])).toEqual([["transport.request-id-echo", seen.withId]]);
  });
});
