import { availableParallelism } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { type Dispatcher, request } from "undici";
import { mulberry32 } from "../../arbitraries/mulberry32.js";
import { networkAgent } from "../../client/network.js";
import { HEADERS, JSON_CONTENT_TYPE } from "../../contract/index.js";
import { allowedCpus, listeningProcesses, portOf } from "../../target/cores.js";
import { keysOfSet } from "../../target/key-roles.js";
import { answerOf } from "../burst.js";
import { nextRequestId } from "../concurrency-checks.js";
import { dataFieldOf, type ScenarioContext, ScenarioSetupError } from "../context.js";
import { type LoadResponse, recordMs } from "../recorder.js";
import { type LoadRequest, labelOf, messageTo, requestTo } from "../requests.js";
import { FLOOD_DEFAULTS, FLOOD_SHAPES, type FloodSegment, floodSegments, runFlood } from "./floods.js";
import { BucketLedger, bucketsOf } from "./ledger.js";
import { MinHeap } from "./min-heap.js";
import {
  type ArrivalStream,
  accountsOfShard,
  arrivalAt,
  type CapacityOptions,
  endpointOfShape,
  type Shape,
  streamsOf,
  type TenantAccount,
  type TenantKey,
  tenantsOf,
} from "./plan.js";
import { type CapacitySettings, CapacityTally, HEADROOM_LAG_MS, type Phase } from "./tally.js";

/** The scheduler looks for due arrivals at least this often (ms). */
const TICK_MS = 5;
/** Intervals of the latency-over-time figures: about this many over the drive. */
const INTERVALS = 20;

/** One stream of arrivals as the scheduler keeps it. */
interface Scheduled {
  stream: ArrivalStream;
  account: TenantAccount;
  /** ms after the drive starts of the arrival `n` */
  at: (n: number) => number;
  n: number;
  next: number;
}

/**
 * The open-model drive of `capacity`: every tenant key's arrival streams (src/load/capacity/plan.ts)
 * fire when due, never waiting for answers; each answer's latency counts from when its request
 * was due (coordinated omission corrected), so a generator that falls behind shows in the figures
 * and in its own lateness (the headroom line).
 */
export class CapacityDrive {
  readonly tally = new CapacityTally();
  readonly ledger: BucketLedger;
  readonly settings: CapacitySettings;
  private readonly accounts: TenantAccount[];
  private readonly dispatcher = networkAgent(64);
  /** each key's own agent (Get, Update, messages) and the agents its creates made, not yet deleted */
  private readonly agentOf = new Map<TenantKey, string>();
  private readonly created = new Map<TenantKey, string[]>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly flooder: string | undefined;
  /** noisy-neighbour: the flood's segments, one per shape, in its half of the drive */
  private readonly segments: FloodSegment[];
  /** the stream hog's agent: the flooding tenant's, whose replies run to the time budget */
  private hogAgent: string | undefined;
  private readonly timeoutMs: number;
  private startedAt = 0;

  constructor(
    private readonly ctx: ScenarioContext,
    private readonly options: CapacityOptions,
  ) {
    const all = tenantsOf(options.tenants);
    this.accounts = accountsOfShard(all, options.shard);
    this.ledger = new BucketLedger(ctx.target.windowSeconds * 1000);
    // the first account of the file floods: in whichever shard holds it
    this.flooder = options.profile === "noisy-neighbour" ? all[0]?.id : undefined;
    this.segments = this.flooder
      ? floodSegments(this.floodFromMs(), options.durationSeconds * 1000, options.floods ?? FLOOD_SHAPES)
      : [];
    const offered = this.accounts
      .flatMap((a) => streamsOf(a, options.share, ctx.target.windowSeconds))
      .reduce((n, s) => n + s.perSecond, 0);
    this.settings = {
      profile: options.profile,
      share: options.share,
      durationSeconds: options.durationSeconds,
      rampSeconds: options.rampSeconds,
      intervalSeconds: Math.max(1, Math.round(options.durationSeconds / INTERVALS)),
      tenants: this.accounts.length,
      keys: this.accounts.reduce((n, a) => n + a.keys.length, 0),
      offeredPerSecond: Math.round(offered * 10) / 10,
      ...(this.flooder ? { flooder: this.flooder } : {}),
      ...(options.shard ? { shard: options.shard } : {}),
      service: {
        where: serviceWhere(ctx.target),
        // with the service on CPUs of its own, this process's CPUs are the rest
        cores: availableParallelism(),
        ...(ctx.target.ownCores ? { ownCores: ctx.target.ownCores.cpus.length } : {}),
      },
    };
    // the Remaining judgement needs each tenant's tier (src/load/concurrency-checks.ts)
    for (const a of this.accounts) for (const k of a.keys) ctx.concurrency.knowTier(k.key, a.tierLimit);
    this.timeoutMs = (ctx.target.messageTimeoutSeconds + 30) * 1000;
  }

  /**
   * The tenant accounts that hold one of the run's own keys (a deployment's `--api-key` may be a
   * tenant's): the run's requests before the drive (the reachability probe, earlier scenarios and
   * their cleanups) sit in windows of those accounts that the ledger never saw.
   */
  accountsSharedWithTheRun(): string[] {
    const own = new Set(keysOfSet(this.ctx.target.keys));
    return this.accounts.filter((a) => a.keys.some((k) => own.has(k.key))).map((a) => a.id);
  }

  /** Each key that may create makes an agent of its own, counted in its buckets like any request. */
  async setUp(): Promise<void> {
    const owners = this.accounts.flatMap((a) =>
      a.keys.filter((k) => k.permissions.includes("agents:write")).map((k) => ({ a, k })),
    );
    const made = await Promise.all(
      owners.map(async ({ a, k }) => {
        const req = requestTo("createAgent", { body: { name: this.ctx.name("tenant") } });
        const res = await this.send(k, a, "createAgent", req, Date.now(), false);
        return { k, res };
      }),
    );
    for (const { k, res } of made) {
      const id = res?.status === 201 ? this.createdId(res) : undefined;
      if (!id)
        throw new ScenarioSetupError(
          `key #${k.index} could not create its agent: ${res?.status ?? "no answer"} ${res?.code ?? ""}`,
        );
      this.agentOf.set(k, id);
      this.ctx.track(k.key, id);
    }
    if (this.segments.some((s) => s.shape === "stream-hog")) await this.makeHogAgent();
  }

  /** PROFILE §11 mock-timeout never answers: each message holds its slot until the time budget ends it. */
  private async makeHogAgent(): Promise<void> {
    const account = this.accounts.find((a) => a.id === this.flooder);
    const owner = account?.keys.find((k) => this.agentOf.has(k));
    if (!account || !owner) return;
    const body = { name: this.ctx.name("hog"), modelSettings: { provider: "mock", model: "mock-timeout" } };
    const res = await this.send(owner, account, "createAgent", requestTo("createAgent", { body }), Date.now(), false);
    const id = res?.status === 201 ? this.createdId(res) : undefined;
    if (!id)
      throw new ScenarioSetupError(`the stream hog's agent could not be made: ${res?.status ?? "no answer"} ${res?.code ?? ""}`);
    this.hogAgent = id;
    this.ctx.track(owner.key, id);
  }

  private schedule(): Scheduled[] {
    const { share } = this.options;
    const W = this.ctx.target.windowSeconds;
    const durationMs = this.options.durationSeconds * 1000;
    const rampMs = this.options.rampSeconds * 1000;
    // phases spread each stream's arrivals over its interval: the seed makes them the same every run
    const random = mulberry32(this.ctx.target.seed);
    const out: Scheduled[] = [];
    for (const account of this.accounts)
      for (const stream of streamsOf(account, share, W)) {
        if (stream.perSecond <= 0) continue;
        const phase = random();
        out.push({ stream, account, at: (n) => arrivalAt(n, stream.perSecond, rampMs, phase), n: 0, next: 0 });
      }
    for (const s of out) s.next = s.at(0);
    return out.filter((s) => s.next < durationMs);
  }

  /** The id of a created agent, under the target's identifier field (PROFILE §11: a deployment may name it otherwise). */
  private createdId(res: LoadResponse): string | undefined {
    const id = dataFieldOf(res, this.ctx.target.idField);
    return typeof id === "string" ? id : undefined;
  }

  /** noisy-neighbour: the calm phase runs from the ramp's end to half the rest; the flood after */
  private floodFromMs(): number {
    const { durationSeconds, rampSeconds } = this.options;
    return (rampSeconds + (durationSeconds - rampSeconds) / 2) * 1000;
  }

  private phaseOf(dueMs: number): Phase | undefined {
    if (!this.flooder || dueMs < this.options.rampSeconds * 1000) return undefined;
    if (dueMs < this.floodFromMs()) return "calm";
    return this.segments.find((s) => dueMs >= s.fromMs && dueMs < s.endMs)?.shape;
  }

  /** noisy-neighbour's floods, one after another, beside the steady drive; what each achieved goes in the tally. */
  private async flood(): Promise<void> {
    const account = this.accounts.find((a) => a.id === this.flooder);
    const floodKey = account?.keys.find((k) => this.agentOf.has(k));
    const calm = this.accounts.find((a) => a.id !== this.flooder);
    const calmKey = calm?.keys[0];
    // the flooding tenant is in another shard (or has no key that made an agent): this one does not flood
    if (!account || !floodKey || !calm || !calmKey) return;
    const target = {
      baseUrl: this.ctx.target.baseUrl,
      floodKey: floodKey.key,
      floodAgent: this.agentOf.get(floodKey)!,
      hogAgent: this.hogAgent,
      // a new client of another tenant: a connection of its own, its request counted in the ledger like any
      freshClient: async () => {
        const fresh = networkAgent(1);
        try {
          const req = requestTo("listAgents", { query: { limit: "1" } });
          const res = await this.send(calmKey, calm, "listAgents", req, Date.now(), false, fresh);
          return !res
            ? "no answer (see the transport errors)"
            : res.status >= 500
              ? `${res.status} ${res.code ?? ""}`
              : undefined;
        } finally {
          await fresh.close().catch(() => undefined);
        }
      },
      messageTimeoutSeconds: this.ctx.target.messageTimeoutSeconds,
      ratePerSecond: this.options.floodRate ?? FLOOD_DEFAULTS.ratePerSecond,
      sockets: this.options.floodSockets ?? FLOOD_DEFAULTS.sockets,
      signal: this.ctx.signal,
      ...(this.ctx.target.ownCores ? { serviceCores: this.ctx.target.ownCores } : {}),
      ...sharedMachine(this.ctx.target),
    };
    for (const segment of this.segments) this.tally.floods.push(await runFlood(segment, target, this.startedAt));
  }

  /** Fire every arrival when due until the duration ends; then wait for every answer. */
  async run(): Promise<void> {
    const streams = this.schedule();
    // nothing to drive judges nothing: a shard holding no account of the file, a duration no
    // arrival falls in, keys that may send no request would pass having sent nothing
    if (streams.length === 0) {
      const { shard } = this.options;
      throw new ScenarioSetupError(
        this.accounts.length === 0 && shard
          ? `nothing to drive: shard ${shard.index + 1}/${shard.count} holds no account of the keys file (${tenantsOf(this.options.tenants).length} accounts)`
          : `nothing to drive: no key of the ${this.accounts.length} account(s) may send a request within ${this.options.durationSeconds} s`,
      );
    }
    const durationMs = this.options.durationSeconds * 1000;
    this.startedAt = Date.now();
    const heap = new MinHeap<Scheduled>((s) => s.next);
    for (const s of streams) heap.push(s);
    const flooding = this.flood();
    while (!this.ctx.signal.aborted) {
      const now = Date.now() - this.startedAt;
      let due = heap.peek();
      while (due && due.next <= now) {
        heap.pop();
        this.fire(due, this.startedAt + due.next);
        due.next = due.at(++due.n);
        if (due.next < durationMs) heap.push(due);
        due = heap.peek();
      }
      if (!due) break;
      await sleep(Math.max(1, Math.min(TICK_MS, due.next - now)));
    }
    await flooding;
    // interrupted: what is in flight ends at once (each request listening to the signal would be thousands of listeners)
    const stop = () => void this.dispatcher.destroy();
    this.ctx.signal.addEventListener("abort", stop, { once: true });
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
    this.ctx.signal.removeEventListener("abort", stop);
    for (const [k, ids] of this.created) for (const id of ids) this.ctx.track(k.key, id);
    await this.dispatcher.close();
  }

  /**
   * The verdicts once every answer is in: each 429 no bucket explains and each window a bucket
   * overfilled is a finding (one per clause, with how often and the first one's key, bucket
   * and window); noisy-neighbour compares the other tenants' calm and flooded phases.
   */
  judge(): void {
    const recorder = this.ctx.recorder;
    for (const u of this.ledger.unexpectedRefusals()) {
      this.tally.counts.unexpected++;
      this.tally.tenant(u.account).unexpected++;
      const phase = u.account === this.flooder ? undefined : this.phaseOf(u.sentAt - this.startedAt);
      if (phase) this.tally.phase(phase).unexpected++;
      recorder.fail(
        u.clause,
        "capacity",
        "a request under every bucket of its key, its agent and its account's tier is admitted (PROFILE §7)",
        u.received,
        u.requestId,
      );
    }
    for (const o of this.ledger.overAdmissions())
      recorder.fail(
        o.bucket.clause,
        "capacity",
        `at most ${o.bucket.size} admitted in one window of a bucket`,
        `${o.admitted} admitted in the window of ${o.bucket.label} ending at ${o.reset}`,
      );
  }

  private fire(s: Scheduled, dueAt: number): void {
    const { key, shape } = s.stream;
    // the flooding tenant's steady traffic gives way to its flood: the flood's shape alone is measured
    if (s.account.id === this.flooder && dueAt - this.startedAt >= this.floodFromMs()) {
      this.tally.counts.skipped++;
      return;
    }
    const lagMs = Date.now() - dueAt;
    this.tally.sendLag.recordValue(Math.max(1, Math.round(lagMs * 1000)));
    // the others' sends in each phase: late ones mean the generator, not the service, set their latency
    const phase = s.account.id === this.flooder ? undefined : this.phaseOf(dueAt - this.startedAt);
    if (phase) {
      const p = this.tally.phase(phase);
      p.sent++;
      if (lagMs > HEADROOM_LAG_MS) p.late++;
      p.lagMaxMs = Math.max(p.lagMaxMs, lagMs);
    }
    const agentId = s.stream.agentOwner ? this.agentOf.get(s.stream.agentOwner) : undefined;
    let req: LoadRequest;
    switch (shape) {
      case "createAgent":
        req = requestTo("createAgent", { body: { name: this.ctx.name("tenant") } });
        break;
      case "listAgents":
        req = requestTo("listAgents", { query: { limit: "5" } });
        break;
      case "deleteAgent": {
        const id = this.created.get(key)?.shift();
        // nothing of its own to delete yet: this arrival is skipped, not sent elsewhere
        if (!id) {
          this.tally.counts.skipped++;
          return;
        }
        req = requestTo("deleteAgent", { agentId: id });
        break;
      }
      case "getAgent":
      case "updateAgent":
      case "sendMessage":
      case "streamMessage":
        if (!agentId) return;
        req =
          shape === "getAgent"
            ? requestTo("getAgent", { agentId })
            : shape === "updateAgent"
              ? requestTo("updateAgent", { agentId, body: { bio: `capacity ${s.n}` } })
              : messageTo(agentId, { text: "capacity" });
    }
    const sent = this.send(key, s.account, shape, req, dueAt, true).then(() => {});
    this.inFlight.add(sent);
    void sent.finally(() => this.inFlight.delete(sent));
  }

  /** Send one request now, due at `dueAt`; account for its answer everywhere. */
  private async send(
    key: TenantKey,
    account: TenantAccount,
    shape: Shape,
    req: LoadRequest,
    dueAt: number,
    measured: boolean,
    dispatcher = this.dispatcher,
  ): Promise<LoadResponse | undefined> {
    this.tally.counts.sent++;
    const endpoint = endpointOfShape(shape);
    const agentId = endpoint === "sendMessage" ? req.path.split("/")[2] : undefined;
    const buckets = bucketsOf(key, account, endpoint, agentId);
    const sentAt = Date.now();
    const who = `key #${key.index} (${account.id})`;
    let res: LoadResponse | undefined;
    try {
      res = shape === "streamMessage" ? await this.stream(key, req, dueAt) : await this.plain(key, req, dueAt, dispatcher);
    } catch (err) {
      this.ctx.recorder.transportError(`${labelOf(req)}: ${err instanceof Error ? err.message : String(err)}`);
    }
    const settledAt = Date.now();
    this.ledger.record(who, account.id, buckets, { sentAt, settledAt }, res);
    if (!measured) return res;
    const tenant = this.tally.tenant(account.id);
    const phase = account.id === this.flooder ? undefined : this.phaseOf(dueAt - this.startedAt);
    if (!res || res.status >= 500) {
      tenant.errors++;
      this.tally.counts.errors++;
      if (phase) this.tally.phase(phase).errors++;
    } else if (res.status >= 200 && res.status < 300) {
      tenant.admitted++;
      this.tally.counts.admitted++;
      const us = Math.max(1, Math.round(res.latencyMs * 1000));
      tenant.latency.recordValue(us);
      const interval = Math.floor((dueAt - this.startedAt) / 1000 / this.settings.intervalSeconds);
      this.tally.interval(interval, res.endpoint).recordValue(us);
      if (phase) this.tally.phase(phase).latency.recordValue(us);
      if (shape === "createAgent") {
        const id = this.createdId(res);
        if (id) this.created.set(key, [...(this.created.get(key) ?? []), id]);
      }
    } else if (res.status === 429) {
      tenant.refused++;
      this.tally.counts.refused++;
      if (phase) this.tally.phase(phase).refused++;
    }
    return res;
  }

  /** A JSON request: recorded with its latency from when it was due, and through the response checks (sampled). */
  private async plain(key: TenantKey, req: LoadRequest, dueAt: number, dispatcher: Dispatcher): Promise<LoadResponse> {
    const url = this.ctx.target.baseUrl.replace(/\/+$/, "") + req.path;
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    // PROFILE §1: an id of its own, its echo checked on the answer (ScenarioContext.judge, src/load/concurrency-checks.ts)
    const requestId = nextRequestId();
    const answer = await request(url, {
      method: req.method,
      headers: {
        authorization: `Bearer ${key.key}`,
        [HEADERS.requestId]: requestId,
        ...(body !== undefined ? { "content-type": JSON_CONTENT_TYPE } : {}),
      },
      ...(body !== undefined ? { body } : {}),
      dispatcher,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
    const text = await answer.body.text();
    const res: LoadResponse = {
      ...answerOf(req, url, { status: answer.statusCode, headers: answer.headers, text, latencyMs: Date.now() - dueAt }),
      sentRequestId: requestId,
    };
    this.ctx.recorder.observe(res);
    this.ctx.judge(key.key, req, res);
    return res;
  }

  /**
   * A message read as a stream, through the typed client (every stream checked): time to first
   * byte from when it was due, its first delta, the gaps between deltas, how it ended. The
   * answer handed on settles at the stream's end (its slot is held until then, PROFILE §7).
   */
  private async stream(key: TenantKey, req: LoadRequest, dueAt: number): Promise<LoadResponse> {
    const agentId = req.path.split("/")[2]!;
    // PROFILE §1: an id of its own, its echo judged by the client's request-id-echo check
    const headers = { [HEADERS.requestId]: nextRequestId() };
    const s = await this.ctx.recorder.streaming(
      this.ctx.client(key.key).streamMessage(agentId, { text: "capacity" }, { headers }),
    );
    const ex = s.exchange;
    const res = answerOf(req, ex.request.url, {
      status: s.status,
      headers: ex.response.headers,
      text: ex.response.bodyText,
      latencyMs: ex.receivedAt - dueAt,
    });
    if (s.status !== 200) return res;
    const streams = this.ctx.recorder.streams;
    recordMs(streams.ttfb, ex.receivedAt - dueAt);
    streams.ended[s.error ? "error" : s.done ? "done" : "neither"]++;
    const deltas = s.events.filter((e) => e.event === "delta");
    if (deltas[0]) recordMs(streams.firstDelta, deltas[0].atMs);
    for (let i = 1; i < deltas.length; i++) recordMs(streams.gap, deltas[i]!.atMs - deltas[i - 1]!.atMs);
    const end = s.events.at(-1);
    if (end) recordMs(streams.total, end.atMs);
    this.ctx.recorder.expect(
      s.done !== undefined && s.done.text === s.text,
      "message.stream",
      "capacity",
      "every stream ends with done whose text is the joined deltas",
      () => (s.done ? "done.text differs from the deltas" : `ended with ${end?.event ?? "nothing"}`),
      ex.requestId,
    );
    return res;
  }
}

/**
 * A service sharing this machine's CPUs with the generator (no cores of its own): those CPUs and
 * the processes whose work is expected there, the generator's (this process) and the service's
 * (those listening on its port). Nothing when the service is elsewhere, or its processes cannot be
 * read (then the load average alone says whether the machine was busy).
 */
function sharedMachine(target: ScenarioContext["target"]): { machine?: { cpus: number[]; pids: number[] } } {
  // a container's service is seen from here as a proxy, or not at all: the load average decides
  if (target.ownCores || target.kind === "container" || serviceWhere(target) === "elsewhere") return {};
  const cpus = allowedCpus();
  // a reference in this process is the generator's own; any other listens on the URL's port
  const inHere = target.kind === "embedded" && !target.ownProcess;
  const service = inHere ? [] : listeningProcesses(portOf(target.baseUrl));
  if (!cpus || (!inHere && service.length === 0)) return {};
  return { machine: { cpus, pids: [process.pid, ...service] } };
}

/**
 * Where the service runs, as far as the generator can tell: a deployment at a loopback address
 * (shards driving one local server, a `serve` on this machine) shares this machine's cores like
 * the reference the harness started, so its latency under a storm is judged as theirs.
 */
function serviceWhere(target: ScenarioContext["target"]): NonNullable<CapacitySettings["service"]>["where"] {
  if (target.kind !== "external") return target.ownProcess ? "a process of its own" : "this process";
  const host = new URL(target.baseUrl).hostname.replace(/^\[|\]$/g, "");
  return host === "localhost" || host === "::1" || host.startsWith("127.") ? "a process of its own" : "elsewhere";
}
