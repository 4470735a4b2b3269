/**
 * The reference server's tests over real sockets: a listening server (streams, concurrency,
 * clients that go away), a body read as it arrives, and a small SSE reader.
 */
import type { AddressInfo } from "node:net";
import { createParser } from "eventsource-parser";
import { request, Agent as UndiciAgent } from "undici";
import { KEYS, type TestServer } from "./test-support.js";

/* ------------------------------------------------------ a real listening server */

export interface Listening {
  origin: string;
  dispatcher: UndiciAgent;
  /** the request through undici; `signal` aborts it (a client that goes away) */
  http(
    method: string,
    path: string,
    o?: { key?: string | null; body?: unknown; signal?: AbortSignal },
  ): ReturnType<typeof request>;
  close(): Promise<void>;
}

export async function listen(server: TestServer): Promise<Listening> {
  await server.app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = server.app.server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  const dispatcher = new UndiciAgent({ connections: 64 });
  return {
    origin,
    dispatcher,
    http(method, path, o = {}) {
      const key = o.key === undefined ? KEYS.main : o.key;
      const headers: Record<string, string> = {};
      if (key !== null) headers.authorization = `Bearer ${key}`;
      if (o.body !== undefined) headers["content-type"] = "application/json";
      return request(`${origin}${path}`, {
        method: method as "GET",
        headers,
        body: o.body === undefined ? undefined : JSON.stringify(o.body),
        dispatcher,
        signal: o.signal,
      });
    },
    async close() {
      await dispatcher.close();
      await server.app.close();
    },
  };
}

/** Read a response body as it arrives; `text` grows, `done` resolves at the end (or the abort). */
export function collect(body: AsyncIterable<Uint8Array>): {
  readonly text: string;
  readonly ended: boolean;
  done: Promise<void>;
} {
  const decoder = new TextDecoder();
  const state = { text: "", ended: false, done: Promise.resolve() };
  state.done = (async () => {
    try {
      for await (const chunk of body) state.text += decoder.decode(chunk, { stream: true });
    } catch {
      // an aborted request ends its body with an error; what arrived is kept
    }
    state.ended = true;
  })();
  return state;
}

/* ------------------------------------------------------------------------ SSE */

export type SseFrame = { comment: string } | { event: string; data: unknown };

/**
 * Split an event stream into frames, comment lines and events with their JSON data, in order.
 * The same SSE parser as the harness's client (eventsource-parser), not a second one.
 */
export function parseSse(text: string): SseFrame[] {
  const frames: SseFrame[] = [];
  const parser = createParser({
    onEvent: (message) => frames.push({ event: message.event ?? "message", data: JSON.parse(message.data) }),
    onComment: (comment) => frames.push({ comment: comment.trim() }),
  });
  parser.feed(text);
  return frames;
}

export const eventsOf = (frames: SseFrame[]) => frames.filter((f): f is { event: string; data: unknown } => "event" in f);
export const commentsOf = (frames: SseFrame[]) => frames.filter((f): f is { comment: string } => "comment" in f);
