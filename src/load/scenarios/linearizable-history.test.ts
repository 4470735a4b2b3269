import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { isRecord } from "../../contract/index.js";
import { startReferenceServer } from "../../target/embedded.js";
import type { StartedReference } from "../../target/types.js";
import { InconclusiveError, ScenarioContext } from "../context.js";
import { LoadRecorder } from "../recorder.js";
import { deploymentAt } from "../test-support.js";
import { LINEARIZABLE_HISTORY } from "./linearizable-history.js";

/**
 * The concurrent-history check against deployments that are conformant but not the reference as it
 * is: one that names its identifier field otherwise (PROFILE §11), and one whose answers stop coming.
 */

let reference: StartedReference;
const proxies: Server[] = [];

beforeAll(async () => {
  // a short window: the cleanups of both tests delete more agents than one window of the Delete bucket admits
  reference = await startReferenceServer({ windowSeconds: 2 });
});
afterAll(async () => {
  await Promise.all(proxies.map((p) => new Promise((resolve) => p.close(resolve))));
  await reference.close();
});

/**
 * The reference behind a proxy that rewrites its answers: `rewrite` gets the request and the parsed
 * body, and returns the body to send, or undefined to drop the connection without an answer.
 */
async function behindProxy(rewrite: (method: string, path: string, body: unknown) => unknown): Promise<string> {
  const origin = new URL(reference.baseUrl).origin;
  const proxy = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => name !== "host" && name !== "connection"));
    const upstream = await request(`${origin}${req.url}`, {
      method: req.method as "GET",
      headers: headers as Record<string, string>,
      ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
    });
    const text = await upstream.body.text();
    const body = rewrite(req.method ?? "GET", req.url ?? "", text ? JSON.parse(text) : undefined);
    if (body === undefined) return req.socket.destroy();
    const out = JSON.stringify(body);
    const passed = Object.entries(upstream.headers).filter(
      ([name]) => !["content-length", "connection", "keep-alive"].includes(name),
    );
    res.writeHead(upstream.statusCode, { ...Object.fromEntries(passed), "content-length": Buffer.byteLength(out) });
    res.end(out);
  });
  proxies.push(proxy);
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/v1`;
}

async function run(baseUrl: string, idField = "id", beforeCleanup = () => {}) {
  const target = deploymentAt(baseUrl, { keys: { main: reference.keys.keys[0]!.key }, idField, windowSeconds: 2 });
  const recorder = new LoadRecorder(target, LINEARIZABLE_HISTORY.id);
  const ctx = new ScenarioContext(target, recorder, new AbortController().signal);
  try {
    await LINEARIZABLE_HISTORY.run(ctx);
    return { recorder, error: undefined };
  } catch (error) {
    return { recorder, error };
  } finally {
    beforeCleanup();
    await ctx.cleanup();
  }
}

describe("linearizable-history on a conformant deployment", () => {
  test("whose identifier field is agentId (PROFILE §11): every history explained, no failure", async () => {
    const renamed = (record: unknown) => {
      if (!isRecord(record) || !("id" in record)) return record;
      const { id, ...rest } = record;
      return { agentId: id, ...rest };
    };
    const baseUrl = await behindProxy((_method, path, body) => {
      // a Send Message reply is no agent record: its agentId names the agent already
      if (!isRecord(body) || path.includes("/messages")) return body;
      return { ...body, data: Array.isArray(body.data) ? body.data.map(renamed) : renamed(body.data) };
    });
    const { recorder, error } = await run(baseUrl, "agentId");
    expect(error).toBeUndefined();
    expect(recorder.failures.map((f) => `${f.clause}: ${f.received}`)).toEqual([]);
  });

  test(
    "whose answers to the history's requests stop coming: inconclusive, the lost answers counted, no failure",
    { timeout: 120_000 },
    async () => {
      let history = true;
      // the setup's creates and the cleanup's deletes pass; every operation of the history goes unanswered
      const baseUrl = await behindProxy((method, path, body) =>
        !history || (method === "POST" && path === "/v1/agents") ? body : undefined,
      );
      const { recorder, error } = await run(baseUrl, "id", () => {
        history = false;
      });
      expect(error).toBeInstanceOf(InconclusiveError);
      expect(String((error as Error).message)).toMatch(/^0 of 48 operations had an answer the model reads .*48 with no answer/);
      expect(recorder.failures).toEqual([]);
      expect([...recorder.transportErrors.values()].reduce((a, b) => a + b, 0)).toBe(48);
    },
  );
});
