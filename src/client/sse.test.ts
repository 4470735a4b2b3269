import { describe, expect, test } from "vitest";
import { EventStreamCollector, summarizeStream } from "./sse.js";

const reply = {
  id: "msg_1",
  agentId: "ag_1",
  conversationId: "conv_1",
  turn: 1,
  userId: null,
  roomId: null,
  text: "Hello there",
  createdAt: "2026-11-22T12:00:00.000Z",
};

function collect(chunks: Array<string | Uint8Array>) {
  let tick = 0;
  const seen: string[] = [];
  const collector = new EventStreamCollector(
    () => tick++,
    (e) => seen.push(e.event),
  );
  for (const chunk of chunks) collector.feed(chunk);
  collector.end();
  return { collector, seen };
}

describe("EventStreamCollector", () => {
  test("parses events split across chunks, and counts heartbeat comments", () => {
    const stream = [
      ": keep-alive\n\n",
      'event: delta\ndata: {"text":"Hello"}\n\n',
      ":\n\n",
      "event: delta\nda",
      'ta: {"text":" there"}\n\n',
      `event: done\ndata: ${JSON.stringify(reply)}\n\n`,
    ];
    const { collector, seen } = collect(stream);
    expect(seen).toEqual(["delta", "delta", "done"]);
    expect(collector.comments).toBe(2);
    expect(collector.events[1]).toMatchObject({ event: "delta", data: { text: " there" }, raw: '{"text":" there"}' });
    expect(collector.framingIssues).toEqual([]);
  });

  test("decodes UTF-8 split inside a character", () => {
    const bytes = new TextEncoder().encode('event: delta\ndata: {"text":"é😀"}\n\n');
    const { collector } = collect([bytes.subarray(0, 27), bytes.subarray(27)]);
    expect(collector.events[0]?.data).toEqual({ text: "é😀" });
  });

  test("an event without an event field is a message; data that is not JSON stays raw", () => {
    const { collector } = collect(["data: not json\n\n"]);
    expect(collector.events).toEqual([{ event: "message", data: undefined, raw: "not json", atMs: 0 }]);
  });

  test("notes a stream that ends inside an event", () => {
    const { collector } = collect(['event: delta\ndata: {"text":"x"}\n']);
    expect(collector.events).toEqual([]);
    expect(collector.framingIssues).toHaveLength(1);
  });

  test("CRLF framing and a trailing comment are fine", () => {
    const { collector } = collect(['event: delta\r\ndata: {"text":"x"}\r\n\r\n: bye\r\n']);
    expect(collector.events).toHaveLength(1);
    expect(collector.framingIssues).toEqual([]);
  });
});

describe("summarizeStream", () => {
  test("joins deltas and takes the done reply", () => {
    const { collector } = collect([
      'event: delta\ndata: {"text":"Hello"}\n\n',
      'event: delta\ndata: {"text":" there"}\n\n',
      `event: done\ndata: ${JSON.stringify(reply)}\n\n`,
    ]);
    const summary = summarizeStream(collector.events);
    expect(summary.text).toBe("Hello there");
    expect(summary.done?.turn).toBe(1);
    expect(summary.parseIssues).toEqual([]);
  });

  test("takes the error event", () => {
    const { collector } = collect(['event: error\ndata: {"code":"MODEL_ERROR","message":"boom"}\n\n']);
    expect(summarizeStream(collector.events).error).toEqual({ code: "MODEL_ERROR", message: "boom" });
  });

  test("reports shapes PROFILE §5 does not allow, without throwing", () => {
    const { collector } = collect([
      'event: delta\ndata: {"text":1}\n\n',
      'event: progress\ndata: {"pct":5}\n\n',
      'event: done\ndata: {"text":"x"}\n\n',
      'event: error\ndata: {"code":"NOPE","message":"m"}\n\n',
      "event: delta\ndata: nope\n\n",
    ]);
    const summary = summarizeStream(collector.events);
    const paths = summary.parseIssues.map((i) => i.path);
    expect(paths).toContain("events.0.text");
    expect(paths).toContain("events.1.event");
    expect(paths).toContain("events.2.id");
    expect(paths).toContain("events.3.code");
    expect(paths).toContain("events.4.data");
    expect(summary.done).toBeUndefined();
    expect(summary.error?.code).toBe("NOPE");
  });
});
