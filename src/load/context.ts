import { responseChecks } from "../checks/layer.js";
import {
  clockReading,
  compose,
  type Dispatch,
  type Exchange,
  type OutgoingRequest,
  Redactor,
  recording,
  redaction,
  ServiceClient,
  systemClock,
  TransportError,
  undiciTransport,
} from "../client/index.js";
import { NO_LITERALS } from "../client/literals.js";
import { networkAgent } from "../client/network.js";
import {
  type Agent,
  type ClauseId,
  type CreateAgentBody,
  endedByTheBudget,
  HEADERS,
  isRecord,
  JSON_CONTENT_TYPE,
  matchEndpoint,
} from "../contract/index.js";
import { MEASUREMENT_INCONCLUSIVE } from "../report/verdict.js";
import { type HarnessTarget, targetSecrets } from "../target/harness-target.js";
import { type KeyRoleName, keyVariable, roleOfKey } from "../target/key-roles.js";
import { ConcurrencyChecks, echoes, nextRequestId, type RemainingTally } from "./concurrency-checks.js";
import { loadResponseOf, receivedExchange } from "./exchanges.js";
import type { LoadOptions } from "./options.js";
import type { LoadRecorder, LoadResponse } from "./recorder.js";
import { type LoadRequest, labelOf, labelOfUrl } from "./requests.js";

/** A field of an answer's `data`, when the body has one. */
export const dataFieldOf = (res: { json: unknown }, field: string): unknown => {
  const data = isRecord(res.json) ? res.json.data : undefined;
  return isRecord(data) ? data[field] : undefined;
};

/**
 * The target's clock as `verify` estimated it from its Date header (offset, tolerated difference);
 * without an estimate none is tolerated for a server on this very machine, 2 s for a deployment.
 */
const targetClock = (target: HarnessTarget) => clockReading(target.serviceClock, target.kind === "external" ? 2 : 0);

/** The tier of the account behind the load scenarios' key (ScenarioContext.loadKey), when known. */
export const loadTierOf = (target: HarnessTarget): number | undefined =>
  target.keys.load ? target.loadTiers?.load : target.tierLimit;

/** The tier of the account behind `key`, when the target says it: the main account's, or a load account's by its role. */
function tierOfKey(target: HarnessTarget, key: string): number | undefined {
  const tiers: Partial<Record<KeyRoleName, number>> = { ...target.loadTiers, main: target.tierLimit };
  const role = roleOfKey(target.keys, key);
  return role && tiers[role];
}

/** What a scenario works with: the target, its recorder, clients for its keys, agents it cleans up. */
export class ScenarioContext {
  private readonly clients = new Map<string, ServiceClient>();
  private readonly raw = new Map<string, { send: Dispatch; judging: (transport: Dispatch) => Dispatch }>();
  private readonly made: Array<{ key: string; id: string }> = [];
  private readonly dispatcher = networkAgent(256);
  private readonly secrets: string[];
  /** the answers autocannon handed to the response checks, still in the layers */
  private readonly judging = new Set<Promise<unknown>>();
  private seq = 0;
  /** what only concurrency shows (src/load/concurrency-checks.ts), judged on every answer */
  readonly concurrency: ConcurrencyChecks;
  /** what the Remaining judgement judged, once the scenario is cleaned up */
  remaining: RemainingTally | undefined;

  constructor(
    readonly target: HarnessTarget,
    readonly recorder: LoadRecorder,
    readonly signal: AbortSignal,
    readonly options: LoadOptions = {},
  ) {
    this.secrets = targetSecrets(target, options.capacity?.tenants);
    this.concurrency = new ConcurrencyChecks({
      windowSeconds: target.windowSeconds,
      clock: targetClock(target),
      tierOf: (key) => tierOfKey(target, key),
      fail: (...failure) => recorder.fail(...failure),
    });
  }

  /** The key of the load scenarios' own account, or the main key when the target gave none. */
  get loadKey(): string {
    return this.target.keys.load ?? this.target.keys.main;
  }

  /**
   * verify's response-level checks as a client layer (src/checks/layer.ts): every exchange that
   * passes is judged, and what they find is a finding of the scenario. Sits outside redaction.
   */
  private checks() {
    return responseChecks({
      baseUrl: this.target.baseUrl,
      context: {
        authenticated: true,
        keys: this.secrets,
        tokens: NO_LITERALS,
        windowSeconds: this.target.windowSeconds,
        clockSkewSeconds: targetClock(this.target).toleranceSeconds,
        clockOffsetSeconds: targetClock(this.target).offsetSeconds,
        idField: this.target.idField,
      },
      onJudged: (ex, found) => this.recorder.judged(ex, found),
    });
  }

  /** The variable a curl line reads `key` from: the one of its flag, so a replay sends the same key. */
  private keyVariable(key: string): string {
    return keyVariable(roleOfKey(this.target.keys, key) ?? "main");
  }

  /** A typed client (setup, read-back, streams): the client's layers plus the response checks. */
  client(key: string): ServiceClient {
    let client = this.clients.get(key);
    if (!client) {
      client = new ServiceClient({
        baseUrl: this.target.baseUrl,
        apiKey: key,
        idField: this.target.idField,
        secrets: this.secrets,
        keyVariable: this.keyVariable(key),
        timeoutMs: (this.target.messageTimeoutSeconds + 30) * 1000,
        connections: 256,
        onExchange: (ex) => this.observeExchange(key, ex),
        layers: [this.checks()],
      });
      this.clients.set(key, client);
    }
    return client;
  }

  /**
   * The same layers around a bare transport, for one key: `send` records, checks and redacts a
   * request sent at once (never paced, never retried); `judge` passes an answer autocannon
   * received through the checks and the redaction, in place of the transport.
   */
  private layersFor(key: string) {
    let layers = this.raw.get(key);
    if (!layers) {
      const redactor = new Redactor(key, this.secrets, this.keyVariable(key));
      const checked = compose(
        recording((ex) => this.observeExchange(key, ex)),
        this.checks(),
        redaction(redactor),
      );
      layers = {
        send: checked(undiciTransport(this.dispatcher, systemClock)),
        judging: compose(this.checks(), redaction(redactor)),
      };
      this.raw.set(key, layers);
    }
    return layers;
  }

  /** A client's exchange sent with `key`, into the timeline, the latency histograms and the concurrency checks. */
  observeExchange(key: string, ex: Exchange): void {
    const res = loadResponseOf(ex, labelOfUrl(this.target.baseUrl, ex.request.method, ex.request.url));
    this.recorder.observe(res);
    const match = matchEndpoint(ex.request.method, ex.request.url, { baseUrl: this.target.baseUrl });
    this.concurrency.answer({ key, endpoint: match?.spec.id, ...(match?.agentId ? { agentId: match.agentId } : {}) }, res);
  }

  /**
   * An answer autocannon received for `req` sent with `key`: into the concurrency checks, then
   * through the response checks (all of the first answers, then a sample: LoadRecorder.sampled;
   * always one that does not echo its request's X-Request-Id). The recorder has its figures already.
   */
  judge(key: string, req: LoadRequest, res: LoadResponse): void {
    const agentId = matchEndpoint(req.method, req.path)?.agentId;
    this.concurrency.answer({ key, endpoint: req.endpoint, ...(agentId ? { agentId } : {}) }, res);
    // PROFILE §1 on every answer: one carrying another request's id goes to the request-id-echo check
    if (!this.recorder.sampled(res) && echoes(res.sentRequestId, res)) return;
    const replay: Dispatch = async (request) => ({ exchange: receivedExchange(request, res), aborted: false });
    const judged = this.layersFor(key).judging(replay)(this.outgoing(key, req, res.sentRequestId));
    this.judging.add(judged);
    void judged.finally(() => this.judging.delete(judged));
  }

  /** What autocannon needs to send with `key` (src/load/burst.ts): its answers come back here. */
  generator(key: string) {
    return {
      baseUrl: this.target.baseUrl,
      key,
      recorder: this.recorder,
      signal: this.signal,
      judge: (req: LoadRequest, res: LoadResponse) => this.judge(key, req, res),
    };
  }

  /** Every answer handed to the checks has been judged. */
  async judged(): Promise<void> {
    await Promise.allSettled([...this.judging]);
  }

  /** `req` as the layers send it, with the X-Request-Id it carries, if any (PROFILE §1: echoed, checked on its answer). */
  private outgoing(key: string, req: LoadRequest, requestId: string | undefined): OutgoingRequest {
    const base = new URL(this.target.baseUrl);
    const body = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body));
    return {
      method: req.method,
      origin: base.origin,
      path: base.pathname.replace(/\/+$/, "") + req.path,
      relativePath: req.path,
      headers: {
        authorization: `Bearer ${key}`,
        ...(requestId !== undefined ? { [HEADERS.requestId]: requestId } : {}),
        ...(body !== undefined ? { "content-type": JSON_CONTENT_TYPE } : {}),
      },
      body,
      timeoutMs: (this.target.messageTimeoutSeconds + 30) * 1000,
      attempt: 1,
    };
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
        await this.waitForReset(res.exchange.rate?.reset);
        continue;
      }
      throw new ScenarioSetupError(`creating an agent answered ${res.status} ${res.error?.code ?? ""}`);
    }
    throw new ScenarioSetupError("creating an agent stayed rate-limited for three windows");
  }

  private async deleteEach(agents: ReadonlyArray<{ key: string; id: string }>): Promise<void> {
    for (const { key, id } of agents) {
      for (let attempt = 0; attempt < 3; attempt++) {
        const res = await this.client(key).deleteAgent(id);
        if (res.status !== 429) break;
        await this.waitForReset(res.exchange.rate?.reset).catch(() => {});
      }
    }
  }

  track(key: string, id: string): void {
    this.made.push({ key, id });
  }

  /** Sleep until the announced reset (Unix seconds) has passed on the target's clock. */
  async waitForReset(resetSeconds: number | undefined): Promise<void> {
    await this.until(this.refillAt(resetSeconds));
  }

  /** When an announced reset (Unix seconds, the target's clock) has surely passed, in harness epoch ms. */
  refillAt(resetSeconds: number | undefined): number {
    if (resetSeconds === undefined) throw new ScenarioSetupError("an answer announced no X-RateLimit-Reset to wait for");
    const clock = targetClock(this.target);
    return (resetSeconds - clock.offsetSeconds + clock.toleranceSeconds) * 1000;
  }

  /**
   * How long the window whose X-RateLimit-Reset is `resetSeconds` surely has left, in ms (≤ 0: it
   * may have ended): Reset is told in whole seconds, rounded up, so the window may end up to a
   * second before it; read on the target's clock, less the clock's tolerance.
   */
  windowLeftMs(resetSeconds: number): number {
    const clock = targetClock(this.target);
    return (resetSeconds - 1 - clock.offsetSeconds - clock.toleranceSeconds) * 1000 - Date.now();
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

  /** One request, sent at once (never paced, never retried) through the layers: recorded and checked. */
  async single(key: string, req: LoadRequest): Promise<LoadResponse> {
    const { exchange } = await this.layersFor(key).send({ ...this.outgoing(key, req, nextRequestId()), signal: this.signal });
    return loadResponseOf(exchange, labelOf(req));
  }

  /**
   * Is a request admitted? Sent at once through the layers; an admitted one (200) is left as soon
   * as its head arrives (a stream it opened is closed: its slot frees), with its status and
   * headers; a refusal is read whole. Either way it is recorded and checked like any answer.
   */
  async admitted(key: string, req: LoadRequest): Promise<LoadResponse> {
    const abort = new AbortController();
    try {
      const { exchange } = await this.layersFor(key).send({
        ...this.outgoing(key, req, nextRequestId()),
        signal: abort.signal,
        stream: {},
        onHead: ({ status }) => {
          if (status === 200) abort.abort();
        },
      });
      return loadResponseOf(exchange, labelOf(req));
    } catch (error) {
      // a 200 whose body was not an event stream, left before it was read: no exchange to read back
      if (error instanceof TransportError && error.kind === "aborted")
        throw new ScenarioSetupError(`${req.method} ${req.path}: admitted, but not as an event stream`);
      throw error;
    }
  }

  /**
   * PROFILE §7: a request counts in its endpoint's (or agent's) bucket and in the account's tier, and
   * its headers describe whichever has the fewest left. Before a part of a scenario that must meet
   * no empty bucket, `probe` — counted in the same buckets as that part's requests — reads that
   * fewest: `needed` or more is room in every one of them; fewer, and the scenario waits for the
   * refill the probe announced and reads again. The reading is returned: what the part's own
   * readings are then judged against (a bucket loses only what is counted in it).
   */
  async withRoom(key: string, probe: LoadRequest, needed: number): Promise<LoadResponse & { rate: { remaining: number } }> {
    for (let attempt = 1; attempt <= MAX_ROOM_WINDOWS; attempt++) {
      const reading = await this.single(key, probe);
      const remaining = reading.rate?.remaining;
      if (remaining === undefined || reading.rate === undefined)
        throw new ScenarioSetupError(`${probe.method} ${probe.path} announced no X-RateLimit-Remaining to plan on`);
      if (remaining >= needed && reading.status !== 429) return { ...reading, rate: { ...reading.rate, remaining } };
      await this.waitForReset(reading.rate.reset);
    }
    throw new ScenarioSetupError(
      `the buckets of ${probe.method} ${probe.path} never had ${needed} requests left in ${MAX_ROOM_WINDOWS} windows (the account's tier too small?)`,
    );
  }

  /**
   * Delete the first `count` agents the scenario made, now: a scenario that is done with them
   * deletes them while it waits out another bucket's window, so that its cleanup does not wait
   * out a Delete window of its own after it.
   */
  async deleteMade(count: number): Promise<void> {
    await this.deleteEach(this.made.splice(0, count));
  }

  /** Delete what the scenario made and close its clients. */
  async cleanup(): Promise<void> {
    await this.deleteEach(this.made.splice(0));
    await this.judged();
    this.remaining = this.concurrency.judgeRemaining();
    await Promise.all([...this.clients.values()].map((c) => c.close()));
    await this.dispatcher.close();
  }

  fail(clause: ClauseId, check: string, expected: string, received: string, requestId?: string): void {
    this.recorder.fail(clause, check, expected, received, requestId);
  }

  /**
   * Whether `r` was admitted: 200, or a message the budget ended (PROFILE §5: 503 AGENT_UNAVAILABLE
   * at the budget, an admitted exchange's end on a runner or service too slow for the run's budget).
   */
  admittedAnswer(r: LoadResponse): boolean {
    return r.status === 200 || endedByTheBudget(r.code, r.latencyMs, this.target.messageTimeoutSeconds);
  }

  /** Expect `r` admitted (200, or ended by the budget); a finding shows what came instead, its status and error code. */
  expectAdmitted(r: LoadResponse, clause: ClauseId, check: string, expected: string): boolean {
    const received = () => `${r.status} ${r.code ?? ""}`;
    return this.recorder.expect(this.admittedAnswer(r), clause, check, expected, received, r.requestId);
  }
}

/** How many windows a scenario waits for its buckets to have room (ScenarioContext.withRoom). */
const MAX_ROOM_WINDOWS = 3;

/** A scenario could not set itself up (the target refused a plain create, no refill announced): not a verdict. */
export class ScenarioSetupError extends Error {
  override name = "ScenarioSetupError";
}

/** Too much changed during a measurement (a window turned mid-burst) three times: no verdict. */
export class InconclusiveError extends Error {
  override name = MEASUREMENT_INCONCLUSIVE;
}

/**
 * Inconclusive because another client spent what the scenario measures (the same key's bucket):
 * the reports name another client's activity as the cause, not the measurement.
 */
export class AnotherClientError extends InconclusiveError {
  override name = "Inconclusive";
}
