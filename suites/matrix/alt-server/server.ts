import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { z } from "zod";
import {
  BODY_LIMIT_BYTES,
  compareCodePoints,
  createAgentBodySchema,
  detailsFromIssues,
  type ErrorCode,
  type ErrorDetail,
  isRecord,
  type KeysFile,
  listQuerySchema,
  MESSAGE_TIMING,
  MOCK_MODELS,
  messageBodySchema,
  type Permission,
  PLATFORM_NEEDS_ENABLED,
  RATE_LIMITS,
  READ_ONLY_FIELDS,
  REQUEST_ID_PATTERN,
  STATUS_OF_CODE,
  updateAgentBodySchema,
} from "../../../src/contract/index.js";

/**
 * A second conformant Agent Service v1, written apart from src/server so that the harness is
 * judged against an implementation that shares none of the reference's choices. It takes the
 * other roads HTTP, SSE and PROFILE allow: windows on a fixed grid of W seconds of its own clock
 * (not from a bucket's first request), a clock offset, pretty JSON with a charset parameter,
 * `Connection: close` on every answer, 405/413/415 where §3 allows them, and streams with CRLF line
 * ends, `id:` and `retry:` fields, `data:` without its optional space and pretty JSON split over
 * several `data:` lines. Only the contract's schemas and numbers are shared (what is valid input
 * is the contract's to say); routing, buckets, merge, lists, the mock model and SSE are its own.
 */
export interface AltServerOptions {
  keys: KeysFile;
  /** W, seconds */
  windowSeconds: number;
  /** T, seconds */
  messageTimeoutSeconds: number;
  /** this server's clock runs this many seconds ahead of the machine's (negative: behind) */
  clockOffsetSeconds?: number;
  /**
   * A model that always fails, as a deployment's model backend may: every message is answered 500
   * MODEL_ERROR (a stream's error event) and the agent is then in error, which PROFILE §5 allows;
   * the mock models of §10 are then not honoured (a target that is not reference-compatible)
   */
  failingModel?: boolean;
  /**
   * the identifier field's name in its records and delete confirmations (default `id`): PROFILE §11
   * lets a deployment name it otherwise, which the harness is told with --id-field
   */
  idField?: string;
  /**
   * a 400 names the field at fault only where PROFILE asks it to (§4: an unknown key and a
   * read-only field "naming it"; §5 List: "naming the parameter"); every other 400 carries no
   * details, which §2 allows ("details is optional")
   */
  fewestDetails?: boolean;
  host?: string;
  port?: number;
}

export interface AltServer {
  baseUrl: string;
  close: () => Promise<void>;
}

type EndpointName = "createAgent" | "listAgents" | "getAgent" | "updateAgent" | "deleteAgent" | "sendMessage";

interface PlatformState {
  enabled: boolean;
  token?: string;
}

interface AgentState {
  id: string;
  account: string;
  name: string;
  bio: string;
  personality: { traits: string[] };
  knowledge: { expertise: string[]; knowledgeBases: string[] };
  goals: { objectives: string[]; motivations: string[] };
  platforms: Record<string, PlatformState>;
  plugins: string[];
  modelSettings: { provider: string; model: string; temperature?: number; maxTokens?: number };
  status: "active" | "inactive" | "error";
  createdAtMs: number;
  updatedAtMs: number;
}

interface Caller {
  key: string;
  account: string;
  permissions: ReadonlySet<string>;
}

class HttpAnswer {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {}
}

const READ_ONLY: ReadonlySet<string> = new Set(READ_ONLY_FIELDS);

const fail = (code: ErrorCode, message: string, details?: ErrorDetail[], headers?: Record<string, string>) =>
  new HttpAnswer(STATUS_OF_CODE[code], { success: false, error: { code, message, ...(details ? { details } : {}) } }, headers);

const PERMISSION_OF: Record<EndpointName, Permission> = {
  createAgent: "agents:write",
  listAgents: "agents:read",
  getAgent: "agents:read",
  updateAgent: "agents:write",
  deleteAgent: "agents:delete",
  sendMessage: "messages:send",
};

/** The routes, matched exactly: a variant (trailing slash, other case) is no route (PROFILE §9 allows 404). */
function route(method: string, path: string): { endpoint?: EndpointName; agentId?: string; allow?: string } | undefined {
  if (path === "/agents") {
    if (method === "GET") return { endpoint: "listAgents" };
    if (method === "POST") return { endpoint: "createAgent" };
    return { allow: "GET, POST" };
  }
  const one = /^\/agents\/([^/]+)$/.exec(path);
  if (one) {
    const agentId = one[1]!;
    if (method === "GET") return { endpoint: "getAgent", agentId };
    if (method === "PATCH") return { endpoint: "updateAgent", agentId };
    if (method === "DELETE") return { endpoint: "deleteAgent", agentId };
    return { allow: "GET, PATCH, DELETE" };
  }
  const messages = /^\/agents\/([^/]+)\/messages$/.exec(path);
  if (messages) return method === "POST" ? { endpoint: "sendMessage", agentId: messages[1]! } : { allow: "POST" };
  return undefined;
}

/** A fixed-window counter on a grid of W seconds of the server's clock. */
class GridBuckets {
  private readonly counts = new Map<string, { window: number; used: number }>();
  constructor(private readonly windowMs: number) {}

  private windowOf(nowMs: number) {
    return Math.floor(nowMs / this.windowMs);
  }
  used(name: string, nowMs: number): number {
    const entry = this.counts.get(name);
    return entry && entry.window === this.windowOf(nowMs) ? entry.used : 0;
  }
  count(name: string, nowMs: number) {
    const window = this.windowOf(nowMs);
    const entry = this.counts.get(name);
    if (entry && entry.window === window) entry.used++;
    else this.counts.set(name, { window, used: 1 });
  }
  endMs(nowMs: number) {
    return (this.windowOf(nowMs) + 1) * this.windowMs;
  }
}

interface BucketRef {
  name: string;
  size: number;
  endpoint: boolean;
}

const sha = (text: string) => createHash("sha256").update(text).digest("base64url");
const newId = (prefix: string) => `${prefix}${randomBytes(12).toString("base64url")}`;
const iso = (ms: number) => new Date(ms).toISOString();

function mediaType(header: string | undefined): string | undefined {
  return header?.split(";")[0]?.trim().toLowerCase();
}

export async function startAltServer(options: AltServerOptions): Promise<AltServer> {
  const offsetMs = (options.clockOffsetSeconds ?? 0) * 1000;
  const windowMs = options.windowSeconds * 1000;
  const budgetMs = options.messageTimeoutSeconds * 1000;
  const now = () => Date.now() + offsetMs;
  const buckets = new GridBuckets(windowMs);
  const callers = new Map<string, Caller>(
    options.keys.keys.map((k) => [k.key, { key: k.key, account: k.account, permissions: new Set(k.permissions) }]),
  );
  const accounts = new Map(options.keys.accounts.map((a) => [a.id, a]));
  const quotaSpent = new Map<string, number>();
  const agents = new Map<string, AgentState>();
  const conversations = new Map<string, { id: string; turns: number }>();
  const inFlight = new Map<string, number>();
  let lastStampMs = 0;
  /** createdAt/updatedAt: the server's clock in ms, never going back */
  const stamp = () => {
    lastStampMs = Math.max(now(), lastStampMs);
    return lastStampMs;
  };

  const idField = options.idField ?? "id";
  const view = (a: AgentState) => ({
    [idField]: a.id,
    name: a.name,
    bio: a.bio,
    personality: { traits: [...a.personality.traits] },
    knowledge: { expertise: [...a.knowledge.expertise], knowledgeBases: [...a.knowledge.knowledgeBases] },
    goals: { objectives: [...a.goals.objectives], motivations: [...a.goals.motivations] },
    platforms: Object.fromEntries(
      Object.entries(a.platforms).map(([name, p]) => [name, { enabled: p.enabled, tokenSet: p.token !== undefined }]),
    ),
    plugins: [...a.plugins],
    modelSettings: { ...a.modelSettings },
    status: a.status,
    createdAt: iso(a.createdAtMs),
    updatedAt: iso(a.updatedAtMs),
  });

  const visibleAgent = (caller: Caller, agentId: string | undefined) => {
    const agent = agentId === undefined ? undefined : agents.get(agentId);
    return agent && agent.account === caller.account ? agent : undefined;
  };

  /** PROFILE §7: the buckets a request counts in — its account's tier, its key's endpoint bucket, the agent's message bucket. */
  function bucketsOf(caller: Caller, endpoint: EndpointName | undefined, agent: AgentState | undefined): BucketRef[] {
    const tier = accounts.get(caller.account)!.tierLimit;
    const refs: BucketRef[] = [{ name: `tier:${caller.account}`, size: tier, endpoint: false }];
    if (endpoint === "sendMessage") {
      if (agent) refs.push({ name: `agent:${agent.id}`, size: RATE_LIMITS.perAgentMessages, endpoint: true });
    } else if (endpoint) {
      refs.push({ name: `key:${sha(caller.key)}:${endpoint}`, size: RATE_LIMITS.perKeyEndpoint[endpoint], endpoint: true });
    }
    return refs;
  }

  function rateHeaders(refs: BucketRef[], nowMs: number) {
    // the bucket with the fewest left; the endpoint's on a tie
    let shown = refs[0]!;
    let shownLeft = Number.POSITIVE_INFINITY;
    for (const ref of refs) {
      const left = Math.max(0, ref.size - buckets.used(ref.name, nowMs));
      if (left < shownLeft || (left === shownLeft && ref.endpoint)) {
        shown = ref;
        shownLeft = left;
      }
    }
    return {
      "X-RateLimit-Limit": String(shown.size),
      "X-RateLimit-Remaining": String(shownLeft),
      "X-RateLimit-Reset": String(Math.ceil(buckets.endMs(nowMs) / 1000)),
    };
  }

  function send(res: ServerResponse, answer: HttpAnswer) {
    const text = `${JSON.stringify(answer.body, null, 2)}\n`;
    res.writeHead(answer.status, {
      ...answer.headers,
      "Content-Type": "application/json; charset=utf-8",
      "Content-Length": String(Buffer.byteLength(text)),
    });
    res.end(text);
  }

  function parseJsonBody(req: IncomingMessage, raw: Buffer, accepted: readonly string[]): unknown | HttpAnswer {
    const type = mediaType(req.headers["content-type"]);
    if (!type || !accepted.includes(type)) return fail("UNSUPPORTED_MEDIA_TYPE", `send the body as ${accepted.join(" or ")}`);
    let value: unknown;
    try {
      value = JSON.parse(raw.toString("utf8"));
    } catch {
      return fail("INVALID_REQUEST", "the body is not JSON", [{ field: "(body)", issue: "malformed JSON" }]);
    }
    if (!isRecord(value))
      return fail("INVALID_REQUEST", "the body must be a JSON object", [{ field: "(body)", issue: "not an object" }]);
    return value;
  }

  function validate<S extends z.ZodType>(schema: S, value: unknown, body = true): z.output<S> | HttpAnswer {
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    const issues = parsed.error.issues;
    if (!body || !options.fewestDetails) return fail("INVALID_REQUEST", "invalid request", detailsFromIssues(issues));
    // under `fewestDetails`, a body's 400 names an unknown or read-only key, and nothing else
    const named = detailsFromIssues(issues.filter((i) => i.code === "unrecognized_keys" || READ_ONLY.has(String(i.path.at(-1)))));
    return fail("INVALID_REQUEST", "invalid request", named.length ? named : undefined);
  }

  /* ---------------------------------------------------------------- agents */

  function createAgent(caller: Caller, body: z.output<typeof createAgentBodySchema>) {
    const at = stamp();
    const agent: AgentState = {
      id: newId("agt_"),
      account: caller.account,
      name: body.name,
      bio: body.bio ?? "",
      personality: { traits: body.personality?.traits ?? [] },
      knowledge: { expertise: body.knowledge?.expertise ?? [], knowledgeBases: body.knowledge?.knowledgeBases ?? [] },
      goals: { objectives: body.goals?.objectives ?? [], motivations: body.goals?.motivations ?? [] },
      platforms: {},
      plugins: body.plugins ?? [],
      modelSettings: { provider: "mock", model: "mock-1", ...body.modelSettings },
      status: body.status ?? "active",
      createdAtMs: at,
      updatedAtMs: at,
    };
    for (const [name, platform] of Object.entries(body.platforms ?? {})) {
      if (platform) agent.platforms[name] = { enabled: platform.enabled, ...(platform.token ? { token: platform.token } : {}) };
    }
    agents.set(agent.id, agent);
    return new HttpAnswer(201, { success: true, data: view(agent) });
  }

  function listAgents(caller: Caller, url: URL) {
    const raw: Record<string, string | string[]> = {};
    for (const [name, value] of url.searchParams) {
      const seen = raw[name];
      raw[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
    }
    const query = validate(listQuerySchema, raw, false);
    if (query instanceof HttpAnswer) return query;
    const sign = query.order === "asc" ? 1 : -1;
    const byField = (a: AgentState, b: AgentState) => {
      if (query.sortBy === "createdAt") return a.createdAtMs - b.createdAtMs;
      return query.sortBy === "name" ? compareCodePoints(a.name, b.name) : compareCodePoints(a.status, b.status);
    };
    const mine = [...agents.values()]
      .filter((a) => a.account === caller.account && (query.status === undefined || a.status === query.status))
      .sort((a, b) => sign * (byField(a, b) || compareCodePoints(a.id, b.id)));
    const start = (query.page - 1) * query.limit;
    const totalPages = Math.ceil(mine.length / query.limit);
    return new HttpAnswer(200, {
      success: true,
      data: start < mine.length ? mine.slice(start, start + query.limit).map(view) : [],
      pagination: { page: query.page, limit: query.limit, total: mine.length, totalPages, hasMore: query.page < totalPages },
    });
  }

  /** RFC 7396 over the stored record; a rejected patch changes nothing. */
  function updateAgent(agent: AgentState, patch: z.output<typeof updateAgentBodySchema>) {
    const next: AgentState = structuredClone(agent);
    if (patch.name !== undefined) next.name = patch.name;
    if (patch.bio !== undefined) next.bio = patch.bio ?? "";
    if (patch.status !== undefined) next.status = patch.status;
    if (patch.personality !== undefined)
      next.personality = {
        traits: patch.personality === null ? [] : replaced(next.personality.traits, patch.personality.traits),
      };
    if (patch.knowledge !== undefined) {
      const k = patch.knowledge;
      next.knowledge =
        k === null
          ? { expertise: [], knowledgeBases: [] }
          : {
              expertise: replaced(next.knowledge.expertise, k.expertise),
              knowledgeBases: replaced(next.knowledge.knowledgeBases, k.knowledgeBases),
            };
    }
    if (patch.goals !== undefined) {
      const g = patch.goals;
      next.goals =
        g === null
          ? { objectives: [], motivations: [] }
          : {
              objectives: replaced(next.goals.objectives, g.objectives),
              motivations: replaced(next.goals.motivations, g.motivations),
            };
    }
    if (patch.plugins !== undefined) next.plugins = patch.plugins ?? [];
    if (patch.modelSettings !== undefined) {
      const m = patch.modelSettings;
      if (m === null) next.modelSettings = { provider: "mock", model: "mock-1" };
      else {
        if (m.provider !== undefined) next.modelSettings.provider = m.provider ?? "mock";
        if (m.model !== undefined) next.modelSettings.model = m.model ?? "mock-1";
        if (m.temperature === null) delete next.modelSettings.temperature;
        else if (m.temperature !== undefined) next.modelSettings.temperature = m.temperature;
        if (m.maxTokens === null) delete next.modelSettings.maxTokens;
        else if (m.maxTokens !== undefined) next.modelSettings.maxTokens = m.maxTokens;
      }
    }
    if (patch.platforms === null) next.platforms = {};
    else if (patch.platforms !== undefined) {
      const missing: ErrorDetail[] = [];
      for (const [name, p] of Object.entries(patch.platforms)) {
        if (p === undefined) continue;
        if (p === null) {
          delete next.platforms[name];
          continue;
        }
        const current = next.platforms[name];
        if (!current && p.enabled === undefined) {
          missing.push({ field: `platforms.${name}.enabled`, issue: PLATFORM_NEEDS_ENABLED });
          continue;
        }
        const merged: PlatformState = { enabled: p.enabled ?? current!.enabled };
        const token = p.token === null ? undefined : (p.token ?? current?.token);
        if (token !== undefined) merged.token = token;
        next.platforms[name] = merged;
      }
      if (missing.length) return fail("INVALID_REQUEST", "invalid request", options.fewestDetails ? undefined : missing);
    }
    const { updatedAtMs: _a, ...before } = agent;
    const { updatedAtMs: _b, ...after } = next;
    if (JSON.stringify(before) !== JSON.stringify(after)) {
      next.updatedAtMs = Math.max(stamp(), agent.updatedAtMs + 1);
      agents.set(agent.id, next);
    }
    return new HttpAnswer(200, { success: true, data: view(agents.get(agent.id)!) });
  }

  function deleteAgent(agent: AgentState) {
    agents.delete(agent.id);
    for (const key of conversations.keys()) if (key.startsWith(`${agent.id}\u0000`)) conversations.delete(key);
    return new HttpAnswer(200, { success: true, data: { [idField]: agent.id, deleted: true } });
  }

  /* -------------------------------------------------------------- messages */

  /** The mock model of PROFILE §10: a deterministic reply of agent, text and turn, in pieces. */
  function replyPieces(agent: AgentState, text: string, turn: number): string[] {
    const digest = sha(`${agent.id}\u0000${turn}\u0000${text}`).slice(0, 24);
    const reply = `Turn ${turn}: ${agent.name} heard ${[...text].length} characters (${digest}).`;
    const count = agent.modelSettings.model === MOCK_MODELS.slow ? MESSAGE_TIMING.slowModelMinDeltas + 2 : 3;
    const cps = [...reply];
    const size = Math.ceil(cps.length / count);
    return Array.from({ length: count }, (_, i) => cps.slice(i * size, (i + 1) * size).join("")).filter((p) => p.length);
  }

  function conversationOf(agent: AgentState, body: z.output<typeof messageBodySchema>) {
    const key =
      body.userId === undefined && body.roomId === undefined
        ? `${agent.id}\u0000${newId("")}`
        : `${agent.id}\u0000${JSON.stringify([body.userId ?? null, body.roomId ?? null])}`;
    let conversation = conversations.get(key);
    if (!conversation) {
      conversation = { id: newId("conv_"), turns: 0 };
      conversations.set(key, conversation);
    }
    return conversation;
  }

  /**
   * Runs one exchange: resolves with the reply's pieces as the model makes them (onPiece), or
   * rejects with MODEL_ERROR / AGENT_UNAVAILABLE. The budget T runs from arrival.
   */
  function runModel(
    agent: AgentState,
    pieces: string[],
    arrivedMs: number,
    signal: AbortSignal,
    onPiece: (piece: string) => void,
  ) {
    const model = agent.modelSettings.model;
    return new Promise<void>((resolve, reject) => {
      const timers: NodeJS.Timeout[] = [];
      const stop = () => timers.forEach(clearTimeout);
      signal.addEventListener("abort", () => {
        stop();
        reject(new Error("client gone"));
      });
      const left = budgetMs - (Date.now() - arrivedMs);
      timers.push(
        setTimeout(() => {
          stop();
          reject(fail("AGENT_UNAVAILABLE", "the agent did not answer within the time budget"));
        }, left),
      );
      if (options.failingModel) {
        stop();
        return reject(fail("MODEL_ERROR", `the model ${model} failed`));
      }
      if (model === MOCK_MODELS.timeout) return;
      if (model === MOCK_MODELS.error) {
        stop();
        return reject(fail("MODEL_ERROR", "the model failed"));
      }
      const stepMs = model === MOCK_MODELS.slow ? (MESSAGE_TIMING.slowModelSeconds * 1000) / pieces.length : 0;
      pieces.forEach((piece, i) => {
        timers.push(
          setTimeout(
            () => {
              onPiece(piece);
              if (i === pieces.length - 1) {
                stop();
                resolve();
              }
            },
            stepMs * (i + 1),
          ),
        );
      });
    });
  }

  async function sendMessage(
    res: ServerResponse,
    agent: AgentState,
    body: z.output<typeof messageBodySchema>,
    baseHeaders: Record<string, string>,
    arrivedMs: number,
  ) {
    if (agent.status !== "active")
      return send(res, fail("AGENT_UNAVAILABLE", `the agent is ${agent.status}`, undefined, baseHeaders));
    const quota = accounts.get(agent.account)!.messageQuota;
    const spent = quotaSpent.get(agent.account) ?? 0;
    if (quota !== null && spent >= quota)
      return send(res, fail("INSUFFICIENT_QUOTA", "the message quota is spent", undefined, baseHeaders));
    quotaSpent.set(agent.account, spent + 1);
    const conversation = conversationOf(agent, body);
    const abort = new AbortController();
    res.on("close", () => abort.abort());
    // a stream's turn is taken when it opens (its deltas are that turn's reply) and given back if it
    // fails; a plain answer's when it is ready, so answers sent at once take turns in the order they end
    const streamTurn = body.stream ? ++conversation.turns : undefined;
    const pieces = replyPieces(agent, body.text, streamTurn ?? conversation.turns + 1);
    const replyOf = () => {
      const turn = streamTurn ?? ++conversation.turns;
      return {
        id: newId("msg_"),
        agentId: agent.id,
        conversationId: conversation.id,
        turn,
        userId: body.userId ?? null,
        roomId: body.roomId ?? null,
        text: replyPieces(agent, body.text, turn).join(""),
        createdAt: iso(stamp()),
      };
    };
    const modelFailed = (err: unknown) => {
      if (streamTurn !== undefined && conversation.turns === streamTurn) conversation.turns--;
      if (err instanceof HttpAnswer && isRecord(err.body) && isRecord(err.body.error) && err.body.error.code === "MODEL_ERROR") {
        const stored = agents.get(agent.id);
        if (stored) stored.status = "error";
      }
      return err instanceof HttpAnswer ? err : undefined;
    };

    if (!body.stream) {
      try {
        await runModel(agent, pieces, arrivedMs, abort.signal, () => {});
      } catch (err) {
        const answer = modelFailed(err);
        if (answer) send(res, new HttpAnswer(answer.status, answer.body, baseHeaders));
        return;
      }
      return send(res, new HttpAnswer(200, { success: true, data: replyOf() }, baseHeaders));
    }

    // SSE, the other roads the standard allows: CRLF, retry:, id:, `data:` with no space, one data line per JSON line
    res.writeHead(200, { ...baseHeaders, "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store" });
    let eventId = 0;
    const event = (name: string, data: unknown) => {
      const lines = JSON.stringify(data, null, 2).split("\n");
      res.write(`id:${++eventId}\r\nevent:${name}\r\n${lines.map((l) => `data:${l}`).join("\r\n")}\r\n\r\n`);
    };
    res.write(`retry:${Math.round(budgetMs)}\r\n:stream open\r\n\r\n`);
    let lastWrite = Date.now();
    const heartbeat = setInterval(() => {
      if (Date.now() - lastWrite >= 4000) res.write(":keep-alive\r\n");
    }, 1000);
    try {
      await runModel(agent, pieces, arrivedMs, abort.signal, (p) => {
        lastWrite = Date.now();
        event("delta", { text: p });
      });
      event("done", replyOf());
    } catch (err) {
      const answer = modelFailed(err);
      if (answer && isRecord(answer.body) && isRecord(answer.body.error))
        event("error", { code: answer.body.error.code, message: answer.body.error.message });
    } finally {
      clearInterval(heartbeat);
      res.end();
    }
  }

  /* --------------------------------------------------------------- the door */

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const arrivedMs = Date.now();
    const sentId = req.headers["x-request-id"];
    // PROFILE §1 echoes a well-formed id, but §6 says a key never appears in a response: a key sent as the id is not echoed
    const echo = typeof sentId === "string" && REQUEST_ID_PATTERN.test(sentId) && !callers.has(sentId);
    const requestId = echo ? sentId : newId("req_");
    res.setHeader("X-Request-Id", requestId);
    res.setHeader("Date", new Date(now()).toUTCString());
    res.setHeader("Connection", "close");

    // read the body whole, keeping at most one byte past the limit
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      const buf: Buffer = chunk;
      size += buf.length;
      if (size <= BODY_LIMIT_BYTES + 1) chunks.push(buf);
    }
    const raw = Buffer.concat(chunks);

    const url = new URL(req.url ?? "/", "http://alt.invalid");
    const method = req.method ?? "GET";
    if (url.pathname === "/health" && method === "GET") return send(res, new HttpAnswer(200, { status: "ok" }));

    const authorization = /^\s*bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "");
    const caller = authorization ? callers.get(authorization[1]!) : undefined;
    if (!caller)
      return send(
        res,
        fail("UNAUTHORIZED", "a valid API key is required", undefined, { "WWW-Authenticate": 'Bearer realm="agents"' }),
      );

    const path = url.pathname.startsWith("/v1/") ? url.pathname.slice(3) : undefined;
    const matched = path === undefined ? undefined : route(method, path);
    const endpoint = matched?.endpoint;
    const agent = endpoint ? visibleAgent(caller, matched.agentId) : undefined;
    const refs = bucketsOf(caller, endpoint, agent);
    const countedAt = now();

    // PROFILE §3: after 401, a 429 beats everything; a refused request is counted nowhere
    const empty = refs.filter((r) => buckets.used(r.name, countedAt) >= r.size);
    if (empty.length) {
      const endMs = buckets.endMs(countedAt);
      return send(
        res,
        fail("RATE_LIMIT_EXCEEDED", "too many requests", undefined, {
          "Retry-After": String(Math.max(1, Math.ceil((endMs - countedAt) / 1000))),
          "X-RateLimit-Limit": String(empty.reduce((a, b) => (b.endpoint ? b : a)).size),
          "X-RateLimit-Remaining": "0",
          "X-RateLimit-Reset": String(Math.ceil(endMs / 1000)),
        }),
      );
    }
    if (endpoint === "sendMessage" && agent && (inFlight.get(agent.id) ?? 0) >= RATE_LIMITS.messageConcurrency) {
      return send(
        res,
        fail("RATE_LIMIT_EXCEEDED", "too many messages in flight for this agent", undefined, {
          ...rateHeaders(refs, countedAt),
          "Retry-After": String(RATE_LIMITS.concurrencyRetryAfterSeconds),
        }),
      );
    }
    for (const ref of refs) buckets.count(ref.name, countedAt);
    const headers = rateHeaders(refs, countedAt);
    const answer = (a: HttpAnswer) => send(res, new HttpAnswer(a.status, a.body, { ...headers, ...a.headers }));

    if (size > BODY_LIMIT_BYTES) return answer(fail("PAYLOAD_TOO_LARGE", `a body is at most ${BODY_LIMIT_BYTES} bytes`));
    if (!matched) return answer(fail("NOT_FOUND", "no such route"));
    if (!endpoint)
      return answer(fail("METHOD_NOT_ALLOWED", "this path has no such method", undefined, { Allow: matched.allow! }));
    if (!caller.permissions.has(PERMISSION_OF[endpoint])) return answer(fail("FORBIDDEN", "this key may not do that"));

    if (endpoint === "listAgents") return answer(listAgents(caller, url));
    if (endpoint === "getAgent" || endpoint === "deleteAgent") {
      if (!agent) return answer(fail("AGENT_NOT_FOUND", "no such agent"));
      return answer(endpoint === "getAgent" ? new HttpAnswer(200, { success: true, data: view(agent) }) : deleteAgent(agent));
    }
    const accepted = endpoint === "updateAgent" ? ["application/json", "application/merge-patch+json"] : ["application/json"];
    const json = parseJsonBody(req, raw, accepted);
    if (json instanceof HttpAnswer) return answer(json);
    if (endpoint === "createAgent") {
      const body = validate(createAgentBodySchema, json);
      return answer(body instanceof HttpAnswer ? body : createAgent(caller, body));
    }
    if (!agent) return answer(fail("AGENT_NOT_FOUND", "no such agent"));
    if (endpoint === "updateAgent") {
      const patch = validate(updateAgentBodySchema, json);
      return answer(patch instanceof HttpAnswer ? patch : updateAgent(agent, patch));
    }
    const body = validate(messageBodySchema, json);
    if (body instanceof HttpAnswer) return answer(body);
    inFlight.set(agent.id, (inFlight.get(agent.id) ?? 0) + 1);
    try {
      await sendMessage(res, agent, body, headers, arrivedMs);
    } finally {
      inFlight.set(agent.id, (inFlight.get(agent.id) ?? 1) - 1);
    }
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, fail("INTERNAL_ERROR", "internal error"));
      else res.destroy();
      process.stderr.write(`alt-server: ${err instanceof Error ? err.message : String(err)}\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo; // cast: a TCP server's address() is an AddressInfo once listening
  const host = (options.host ?? "127.0.0.1").includes(":") ? `[${options.host}]` : (options.host ?? "127.0.0.1");
  return {
    baseUrl: `http://${host}:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function replaced(current: string[], patch: string[] | null | undefined): string[] {
  return patch === undefined ? current : (patch ?? []);
}
