import { createParser, type EventSourceParser } from "eventsource-parser";
import { isRecord, type MessageReply, SSE_EVENTS, type SseEventName } from "../contract/index.js";
import { type ParseIssue, parseWith } from "./parse-issues.js";

/** One server-sent event (PROFILE §5 stream): its name, its data parsed as JSON, the data as sent. */
export interface SseEvent {
  /** `event:` field; "message" when absent */
  event: string;
  /** `data:` parsed as JSON; undefined when it is not JSON */
  data: unknown;
  raw: string;
  /** ms since the request was sent */
  atMs: number;
}

export interface StreamError {
  code: string;
  message: string;
}

/**
 * Feeds `text/event-stream` bytes to eventsource-parser, keeping every event and counting comment
 * lines — the heartbeats PROFILE §5 asks for while the model is silent.
 */
export class EventStreamCollector {
  readonly events: SseEvent[] = [];
  /** ms since the request was sent, one per comment line */
  readonly commentAtMs: number[] = [];
  /** the stream broke SSE framing (e.g. it ended inside an event) */
  readonly framingIssues: string[] = [];
  private readonly parser: EventSourceParser;
  private readonly decoder = new TextDecoder("utf-8");
  /** the stream as received */
  raw = "";

  constructor(
    private readonly elapsedMs: () => number,
    onEvent?: (event: SseEvent) => void,
  ) {
    this.parser = createParser({
      onEvent: (message) => {
        let data: unknown;
        try {
          data = JSON.parse(message.data);
        } catch {
          data = undefined;
        }
        const event: SseEvent = { event: message.event ?? "message", data, raw: message.data, atMs: this.elapsedMs() };
        this.events.push(event);
        onEvent?.(event);
      },
      onComment: () => {
        this.commentAtMs.push(this.elapsedMs());
      },
      onError: (error) => {
        this.framingIssues.push(error.message);
      },
    });
  }

  get comments(): number {
    return this.commentAtMs.length;
  }

  feed(chunk: Uint8Array | string): void {
    const text = typeof chunk === "string" ? chunk : this.decoder.decode(chunk, { stream: true });
    this.raw += text;
    this.parser.feed(text);
  }

  /** The stream closed. An event cut off before its blank line is not dispatched (SSE), but noted. */
  end(): void {
    const rest = this.decoder.decode();
    if (rest !== "") this.feed(rest);
    if (endsInsideEvent(this.raw)) this.framingIssues.push("the stream ended inside an event (no blank line after it)");
    this.parser.reset();
  }
}

/** Is there a field line after the last blank line? (comment lines dispatch nothing, so they may trail) */
function endsInsideEvent(raw: string): boolean {
  const lines = raw.replace(/\r\n?/g, "\n").split("\n");
  if (lines.at(-1) !== "") return true; // cut inside a line
  for (let i = lines.length - 2; i >= 0; i--) {
    const line = lines[i] ?? "";
    if (line === "") return false;
    if (!line.startsWith(":")) return true;
  }
  return false;
}

export interface StreamSummary {
  /** the `text` of every delta, joined */
  text: string;
  done?: MessageReply;
  error?: StreamError;
  parseIssues: ParseIssue[];
}

/** Check each event against its PROFILE §5 schema and gather the reply. Reports; never throws. */
export function summarizeStream(events: readonly SseEvent[]): StreamSummary {
  const summary: StreamSummary = { text: "", parseIssues: [] };
  events.forEach((ev, i) => {
    const prefix = `events.${i}`;
    if (ev.data === undefined) {
      summary.parseIssues.push({ path: `${prefix}.data`, code: "invalid_json", message: `"${ev.event}" data is not JSON` });
      return;
    }
    const name = ev.event;
    if (!isSseEventName(name)) {
      summary.parseIssues.push({ path: `${prefix}.event`, code: "unknown_event", message: `unknown event "${ev.event}"` });
      return;
    }
    if (name === "delta") {
      const parsed = parseWith(SSE_EVENTS.delta, ev.data, prefix);
      summary.parseIssues.push(...parsed.issues);
      const text = isRecord(ev.data) ? ev.data.text : undefined;
      if (typeof text === "string") summary.text += text;
    } else if (name === "done") {
      const parsed = parseWith(SSE_EVENTS.done, ev.data, prefix);
      summary.parseIssues.push(...parsed.issues);
      if (parsed.value !== undefined && summary.done === undefined) summary.done = parsed.value;
    } else {
      const parsed = parseWith(SSE_EVENTS.error, ev.data, prefix);
      summary.parseIssues.push(...parsed.issues);
      if (summary.error === undefined) {
        const data = isRecord(ev.data) ? ev.data : {};
        if (parsed.value !== undefined) summary.error = parsed.value;
        else if (typeof data.code === "string") summary.error = { code: data.code, message: String(data.message ?? "") };
      }
    }
  });
  return summary;
}

const isSseEventName = (name: string): name is SseEventName => Object.hasOwn(SSE_EVENTS, name);
