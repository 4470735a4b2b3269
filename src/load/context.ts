import { request } from "undici";
import { type Exchange, ServiceClient } from "../client/index.js";
import { type Agent, type ClauseId, type CreateAgentBody, HEADERS } from "../contract/index.js";
import type { HarnessTarget } from "../target/harness-target.js";
import { endpointLabel, type LoadRequest } from "./burst.js";
import type { LoadRecorder, LoadResponse } from "./recorder.js";

/** The rate headers of one answer, when they are whole numbers. */
export interface RateOf {
  limit: number;
  remaining: number;
  reset: number;
}

export function rateOf(res: { headers: Record<string, string> }): RateOf | undefined {
  const [limit, remaining, reset] = [HEADERS.limit, HEADERS.remaining, HEADERS.reset].map((h) => Number(res.headers[h]));
  if (![limit, remaining, reset].every((n) => Number.isInteger(n))) return undefined;
  return { limit: limit!, remaining: remaining!, reset: reset! };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export const errorCodeOf = (res: { json: unknown }): string | undefined => {
  const error = isRecord(res.json) ? res.json.error : undefined;
  return isRecord(error) && typeof error.code === "string" ? error.code : undefined;
};

/** A field of an answer's `data`, when the body has one. */
export const dataFieldOf = (res: { json: unknown }, field: string): unknown => {
  const data = isRecord(res.json) ? res.json.data : undefined;
  return isRecord(data) ? data[field] : undefined;
};

export const requestIdOf = (res: { headers: Record<string, string> }) => res.headers[HEADERS.requestId];

/** Tolerated clock difference with the target; none for a server on this very machine. */
export const clockSkewMs = (target: HarnessTarget) => (target.kind === "external" ? 2000 : 0);

/** What a scenario works with: the target, its recorder, clients for its keys, agents it cleans up. */
export class ScenarioContext {
  private readonly clients = new Map<string, ServiceClient>();
  private readonly made: Array<{ key: string; id: string }> = [];
  private seq = 0;

  constructor(
    readonly target: HarnessTarget,
    readonly recorder: LoadRecorder,
    readonly signal: AbortSignal,
  ) {}

  /** The key of the load scenarios' own account, or the main key when the target gave none. */
  get loadKey(): string {
    return this.target.keys.load ?? this.target.keys.main;
  }

  /** The tier of the account behind `loadKey`, when known. */
  get loadTier(): number | undefined {
    return this.target.keys.load ? this.target.loadTiers?.load : this.target.tierLimit;
  }

  /** A typed client (setup, read-back, streams): every answer it sees goes through the response checks. */
  client(key: string): ServiceClient {
    let client = this.clients.get(key);
    if (!client) {
      client = new ServiceClient({
        baseUrl: this.target.baseUrl,
        apiKey: key,
        idField: this.target.idField,
        secrets: Object.values(this.target.keys).filter((k): k is string => typeof k === "string"),
        timeoutMs: (this.target.messageTimeoutSeconds + 30) * 1000,
        connections: 256,
        onExchange: (ex) => this.observeExchange(ex),
      });
      this.clients.set(key, client);
    }
    return client;
  }

  /** A client's exchange, into the timeline, latency and the response-level checks. */
  observeExchange(ex: Exchange): void {
    const path = new URL(ex.request.url).pathname.slice(new URL(this.target.baseUrl).pathname.replace(/\/+$/, "").length);
    this.recorder.observe(
      {
        method: ex.request.method,
        url: ex.request.url,
        endpoint: endpointLabel(ex.request.method, path),
        status: ex.response.status,
        headers: ex.response.headers,
        bodyText: ex.response.bodyText,
        json: ex.response.json,
        receivedAt: ex.receivedAt,
        latencyMs: ex.durationMs,
      },
      /^bearer \*\*\*$/i.test(ex.request.headers.authorization ?? ""),
    );
  }

  name(label: string): string {
    return `${this.target.runPrefix}load-${this.recorder.scenario}-${label}-${++this.seq}`;
  }

  /** Create an agent that must succeed; it is deleted when the scenario ends. */
  async createAgent(key: string, body: Partial<CreateAgentBody> = {}): Promise<Agent> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const name = this.name("agent");
      const res = await this.client(key).createAgent({ ...body, name: body.name ?? name });
      if (res.status === 201 && res.data) {
        this.made.push({ key, id: res.data.id });
        return res.data;
      }
      // the create bucket may be empty after a burst: wait for the refill it announced
      if (res.status === 429) {
        await this.waitForReset(rateOf(res.exchange.response)?.reset);
        continue;
      }
      throw new ScenarioSetupError(`creating an agent answered ${res.status} ${res.error?.code ?? ""}`);
    }
    throw new ScenarioSetupError("creating an agent stayed rate-limited for three windows");
  }

  track(key: string, id: string): void {
    this.made.push({ key, id });
  }

  /** Sleep until the announced reset (Unix seconds) has passed on the target's clock. */
  async waitForReset(resetSeconds: number | undefined): Promise<void> {
    if (resetSeconds === undefined) throw new ScenarioSetupError("an answer announced no X-RateLimit-Reset to wait for");
    await this.until(resetSeconds * 1000 + clockSkewMs(this.target));
  }

  /** Resolve at `epochMs` (harness clock); at once when it has passed. */
  until(epochMs: number): Promise<void> {
    const ms = epochMs - Date.now();
    if (ms <= 0) return Promise.resolve();
    if (ms > (this.target.windowSeconds + 5) * 1000 * 2)
      return Promise.reject(new ScenarioSetupError(`refusing to wait ${Math.round(ms / 1000)} s: longer than two windows`));
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        reject(new ScenarioSetupError("interrupted"));
      };
      const timer = setTimeout(() => {
        this.signal.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      this.signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** One request, sent at once with undici (never paced, never retried); recorded and checked. */
  async single(key: string, req: LoadRequest): Promise<LoadResponse> {
    const url = this.target.baseUrl.replace(/\/+$/, "") + req.path;
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    const started = performance.now();
    const res = await request(url, {
      method: req.method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      ...(body !== undefined ? { body } : {}),
      signal: this.signal,
    });
    const text = await res.body.text();
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(", ") : v;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const answer: LoadResponse = {
      method: req.method,
      url,
      endpoint: endpointLabel(req.method, req.path),
      status: res.statusCode,
      headers,
      bodyText: text,
      json,
      receivedAt: Date.now(),
      latencyMs: performance.now() - started,
    };
    this.recorder.observe(answer);
    return answer;
  }

  /**
   * Is a request admitted? Sent at once; resolves with the status as soon as the headers
   * arrive, then goes away (a stream it opened is closed: its slot frees).
   */
  async status(key: string, req: LoadRequest): Promise<number> {
    const abort = new AbortController();
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    const res = await request(this.target.baseUrl.replace(/\/+$/, "") + req.path, {
      method: req.method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      ...(body !== undefined ? { body } : {}),
      signal: abort.signal,
    });
    this.recorder.countStatus(res.statusCode, Date.now());
    abort.abort();
    await res.body.dump().catch(() => {});
    return res.statusCode;
  }

  /** Delete what the scenario made and close its clients. */
  async cleanup(): Promise<void> {
    for (const { key, id } of this.made.splice(0)) {
      for (let attempt = 0; attempt < 3; attempt++) {
        const res = await this.client(key).deleteAgent(id);
        if (res.status !== 429) break;
        await this.waitForReset(rateOf(res.exchange.response)?.reset).catch(() => {});
      }
    }
    await Promise.all([...this.clients.values()].map((c) => c.close()));
  }

  fail(clause: ClauseId, check: string, expected: string, received: string, requestId?: string): void {
    this.recorder.fail(clause, check, expected, received, requestId);
  }

  /** Expect `r` admitted (200); a finding shows what came instead, its status and error code. */
  expectAdmitted(r: LoadResponse, clause: ClauseId, check: string, expected: string): boolean {
    const received = () => `${r.status} ${errorCodeOf(r) ?? ""}`;
    return this.recorder.expect(r.status === 200, clause, check, expected, received, requestIdOf(r));
  }
}

/** A scenario could not set itself up (the target refused a plain create, no refill announced): not a verdict. */
export class ScenarioSetupError extends Error {
  override name = "ScenarioSetupError";
}

/** Too much changed during a measurement (a window turned mid-burst) three times: no verdict. */
export class InconclusiveError extends Error {
  override name = "InconclusiveError";
}
