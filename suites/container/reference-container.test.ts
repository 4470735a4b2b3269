import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import type { Violation } from "../../src/checks/define.js";
import { runChecks } from "../../src/checks/run.js";
import { ServiceClient } from "../../src/client/index.js";
import { NO_LITERALS } from "../../src/client/literals.js";
import { matchEndpoint, RATE_LIMITS } from "../../src/contract/index.js";
import { dockerUnavailableReason, type StartedReferenceContainer, startReferenceContainer } from "../../src/target/container.js";

/**
 * The reference server image, really started in Docker: the container target works end to end.
 * Needs a reachable Docker daemon; CI (CI=true) fails without one instead of skipping. Every
 * request goes through the harness's client, and every answer through the response-level checks.
 */

const dockerMissing = await dockerUnavailableReason();
const mustRun = process.env.CI === "true";
const WINDOW_SECONDS = 60;
const HOW_TO_ENABLE =
  "start a Docker daemon (e.g. `dockerd --bridge=none --iptables=false &`, as .ci/run does) and run `npx vitest run --project container`";

const skipNote = `Docker is not reachable (${dockerMissing}); to run the container suite, ${HOW_TO_ENABLE}`;
if (dockerMissing !== undefined && !mustRun) console.warn(`SKIPPED: ${skipNote}`);

test("Docker is reachable for the container suite", (context) => {
  if (dockerMissing !== undefined && !mustRun) context.skip(skipNote);
  expect(dockerMissing, `Docker is required when CI=true: ${dockerMissing}`).toBeUndefined();
});

describe.skipIf(dockerMissing !== undefined)("reference server in a container", () => {
  let server: StartedReferenceContainer;
  let limited: StartedReferenceContainer;
  const running: StartedReferenceContainer[] = [];

  beforeAll(async () => {
    const results = await Promise.allSettled([
      startReferenceContainer(),
      startReferenceContainer({ windowSeconds: WINDOW_SECONDS }),
    ]);
    // Keep whichever did start, so afterAll stops it even when the other failed.
    for (const result of results) if (result.status === "fulfilled") running.push(result.value);
    const failure = results.find((result) => result.status === "rejected");
    if (failure !== undefined) throw failure.reason;
    [server, limited] = running as [StartedReferenceContainer, StartedReferenceContainer];
    console.info(
      `image ${server.image.built ? "built" : "reused"} in ${server.image.buildMs} ms; containers ready in ${server.startupMs} ms and ${limited.startupMs} ms`,
    );
  });

  afterAll(async () => {
    await Promise.all(running.map((target) => target.close()));
  });

  /** What the response-level checks found in this test's exchanges: nothing, for the reference server. */
  let violations: Violation[] = [];
  const clients: ServiceClient[] = [];
  afterEach(() => {
    expect(violations, "response-level checks").toEqual([]);
    violations = [];
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
  });

  function clientOf(target: StartedReferenceContainer, windowSeconds = RATE_LIMITS.defaultWindowSeconds): ServiceClient {
    const key = target.keys.keys[0]!.key;
    const client = new ServiceClient({
      baseUrl: target.baseUrl,
      apiKey: key,
      onExchange: (ex) => {
        const context = {
          endpoint: matchEndpoint(ex.request.method, ex.request.url, { baseUrl: target.baseUrl })?.spec,
          authenticated: ex.request.headers.authorization !== undefined,
          keys: [key],
          tokens: NO_LITERALS,
          windowSeconds,
          receivedAt: ex.receivedAt,
          clockSkewSeconds: 1,
        };
        violations.push(...runChecks(ex, context));
      },
    });
    clients.push(client);
    return client;
  }

  test("GET /health answers 200 {status: ok} without a key", async () => {
    const health = await clientOf(server).health();
    expect([health.status, health.data, health.parseIssues]).toEqual([200, { status: "ok" }, []]);
  });

  test("POST /v1/agents with a key creates an agent: 201 with the full record", async () => {
    const created = await clientOf(server).createAgent({ name: "container smoke" });
    expect([created.status, created.parseIssues]).toEqual([201, []]);
    expect(created.data?.name).toBe("container smoke");
  });

  test("a streamed message is text/event-stream, its deltas add up to the done event", async () => {
    const api = clientOf(server);
    const agent = (await api.createAgent({ name: "streamer" })).data;
    if (!agent) throw new Error("the create did not answer an agent");
    // The server closes the response after `done`, so reading to the end is waiting on that event.
    const stream = await api.streamMessage(agent.id, { text: "hi" });
    expect([stream.status, stream.parseIssues]).toEqual([200, []]);
    expect(stream.done?.agentId).toBe(agent.id);
    expect(stream.events.filter((event) => event.event === "delta").length).toBeGreaterThanOrEqual(1);
    expect(stream.text, "the deltas add up to the done event's text").toBe(stream.done?.text);
  });

  test("the create past its bucket is 429 RATE_LIMIT_EXCEEDED with Retry-After", async () => {
    const bucket = RATE_LIMITS.perKeyEndpoint.createAgent;
    // Sequential on purpose: the bucket must see exactly `bucket` admitted creates first.
    const api = clientOf(limited, WINDOW_SECONDS);
    for (let i = 1; i <= bucket; i++) expect((await api.createAgent({ name: `burst ${i}` })).status, `create ${i}`).toBe(201);

    const rejected = await api.createAgent({ name: "one too many" });
    expect([rejected.status, rejected.error?.code]).toEqual([429, "RATE_LIMIT_EXCEEDED"]);
    // the retry-after check has judged the header's form; its size is this window's
    expect(rejected.exchange.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(rejected.exchange.retryAfterSeconds).toBeLessThanOrEqual(WINDOW_SECONDS + RATE_LIMITS.resetSlackSeconds);
  });
});
