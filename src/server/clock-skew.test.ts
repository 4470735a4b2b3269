import { describe, expect, test } from "vitest";
import { makeServer, WINDOW_SECONDS } from "./test-support.js";

/**
 * A server whose clock is S seconds off (`--clock-skew S`): every time it shows moves by S —
 * the Date header, X-RateLimit-Reset, createdAt (PROFILE §4, §7) — while durations do not.
 */
describe("clock skew", () => {
  test.for([10, -10])("a clock %i s off shows in Date, Reset and createdAt alike", async (skew) => {
    const s = makeServer({ clockSkewSeconds: skew });
    const now = s.clock.now() + skew * 1000;
    const res = await s.call("POST", "/v1/agents", { body: { name: "A" } });
    expect(Date.parse(String(res.headers.date))).toBe(Math.floor(now / 1000) * 1000);
    expect(Number(res.headers["x-ratelimit-reset"])).toBe(Math.ceil(now / 1000 + WINDOW_SECONDS));
    const data = (res.json as { data: { createdAt: string } }).data;
    expect(Date.parse(data.createdAt)).toBe(now);
  });

  test("durations do not move: a bucket refills one window after its first request", async () => {
    const s = makeServer({ clockSkewSeconds: 10 });
    for (let i = 0; i < 10; i++) await s.call("POST", "/v1/agents", { body: { name: "A" } });
    expect((await s.call("POST", "/v1/agents", { body: { name: "A" } })).status).toBe(429);
    await s.clock.advance(WINDOW_SECONDS * 1000);
    expect((await s.call("POST", "/v1/agents", { body: { name: "A" } })).status).toBe(201);
  });
});
