/**
 * Shared pieces of the reference server's own tests: accounts and keys, a server on a
 * ManualClock driven through `inject()`, and the boundary fixtures. A real listening server
 * for sockets and the SSE reader are in test-support-http.ts.
 */
import { type Agent, type KeysFile, keysFileSchema, PERMISSIONS, type Permission } from "../contract/index.js";
import { type BuildOptions, buildServer } from "./app.js";
import type { Clock, TimerHandle } from "./clock.js";
import type { ServerContext } from "./context.js";
import { agentOf, type Res } from "./test-support-answers.js";

/* ------------------------------------------------------------- accounts and keys */

export const ACCOUNTS = {
  /** the main account: a roomy tier so only the bucket under test fills up */
  main: "acct_main",
  /** another account, for isolation */
  other: "acct_other",
  /** a message quota of 3 */
  quota: "acct_quota",
  /** a tier of 12 requests per window */
  small: "acct_small",
} as const;

export const QUOTA = 3;
export const SMALL_TIER = 12;

const ALL = [...PERMISSIONS];
const without = (p: Permission) => ALL.filter((x) => x !== p);

/** Plaintext keys; each name says what it may do. */
export const KEYS = {
  main: "ak_main_all_0123456789",
  mainSecond: "ak_main_second_0123456789",
  readOnly: "ak_main_read_only_0123456789",
  noWrite: "ak_main_no_write_0123456789",
  noDelete: "ak_main_no_delete_0123456789",
  noSend: "ak_main_no_send_0123456789",
  noRead: "ak_main_no_read_0123456789",
  other: "ak_other_all_0123456789",
  quota: "ak_quota_all_0123456789",
  small: "ak_small_all_0123456789",
} as const;

export function testKeys(): KeysFile {
  return keysFileSchema.parse({
    accounts: [
      { id: ACCOUNTS.main, tierLimit: 10_000, messageQuota: null },
      { id: ACCOUNTS.other, tierLimit: 10_000, messageQuota: null },
      { id: ACCOUNTS.quota, tierLimit: 10_000, messageQuota: QUOTA },
      { id: ACCOUNTS.small, tierLimit: SMALL_TIER, messageQuota: null },
    ],
    keys: [
      { key: KEYS.main, account: ACCOUNTS.main, permissions: ALL },
      { key: KEYS.mainSecond, account: ACCOUNTS.main, permissions: ALL },
      { key: KEYS.readOnly, account: ACCOUNTS.main, permissions: ["agents:read"] },
      { key: KEYS.noWrite, account: ACCOUNTS.main, permissions: without("agents:write") },
      { key: KEYS.noDelete, account: ACCOUNTS.main, permissions: without("agents:delete") },
      { key: KEYS.noSend, account: ACCOUNTS.main, permissions: without("messages:send") },
      { key: KEYS.noRead, account: ACCOUNTS.main, permissions: without("agents:read") },
      { key: KEYS.other, account: ACCOUNTS.other, permissions: ALL },
      { key: KEYS.quota, account: ACCOUNTS.quota, permissions: ALL },
      { key: KEYS.small, account: ACCOUNTS.small, permissions: ALL },
    ],
  });
}

/* ------------------------------------------------------------------ the server */

/** Short enough to keep the suite fast; heartbeats then come every second of clock time. */
export const WINDOW_SECONDS = 60;
export const BUDGET_SECONDS = 3;

interface CallOptions {
  /** the API key; null sends no Authorization header (default: KEYS.main) */
  key?: string | null;
  /** a JSON value, serialised */
  body?: unknown;
  /** a body sent as is */
  raw?: string;
  /** default application/json when there is a body; null sends none */
  contentType?: string | null;
  headers?: Record<string, string>;
}

/** How a request to one endpoint is sent: with a key (null: none), extra headers, and `n` to vary its body. */
export type EndpointCall = (
  s: TestServer,
  agentId: string,
  o?: { key?: string | null; headers?: Record<string, string>; n?: number },
) => Promise<Res>;

/** One valid request to each endpoint of PROFILE §5 (the n-th with a body of its own), at agent `agentId`. */
export const CALL_ENDPOINT = {
  create: (s, _id, { n = 0, ...o } = {}) => s.call("POST", "/v1/agents", { ...o, body: { name: `A${n}` } }),
  list: (s, _id, o) => s.call("GET", "/v1/agents", o),
  get: (s, id, o) => s.call("GET", `/v1/agents/${id}`, o),
  update: (s, id, { n = 0, ...o } = {}) => s.call("PATCH", `/v1/agents/${id}`, { ...o, body: { bio: `b${n}` } }),
  delete: (s, id, o) => s.call("DELETE", `/v1/agents/${id}`, o),
  send: (s, id, { n = 0, ...o } = {}) => s.call("POST", `/v1/agents/${id}/messages`, { ...o, body: { text: `m${n}` } }),
} satisfies Record<string, EndpointCall>;

/* ------------------------------------------------------------------ the clock */

/** A clock that moves only when told to; timers fire in order as it advances. */
class ManualClock implements Clock {
  private current: number;
  private seq = 0;
  private timers: { id: number; at: number; fn: () => void }[] = [];

  constructor(start = Date.UTC(2026, 10, 21, 12, 0, 0)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(ms: number, fn: () => void): TimerHandle {
    const timer = { id: ++this.seq, at: this.current + Math.max(0, ms), fn };
    this.timers.push(timer);
    return { id: timer.id };
  }

  clearTimer(handle: TimerHandle): void {
    this.timers = this.timers.filter((t) => t.id !== handle.id);
  }

  /** Move time forward, firing due timers in order; lets promise callbacks run between them. */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    for (let guard = 0; guard < 100_000; guard++) {
      const due = this.timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.current = Math.max(this.current, due.at);
      due.fn();
      await flushMicrotasks();
    }
    this.current = target;
    await flushMicrotasks();
  }
}

async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}

/** A ManualClock that also tells how many timers are pending, so a test knows a request is in flight. */
export class TestClock extends ManualClock {
  private readonly pending = new Set<number>();

  override setTimer(ms: number, fn: () => void): TimerHandle {
    const handle: TimerHandle = super.setTimer(ms, () => {
      this.pending.delete(handle.id);
      fn();
    });
    this.pending.add(handle.id);
    return handle;
  }

  override clearTimer(handle: TimerHandle): void {
    this.pending.delete(handle.id);
    super.clearTimer(handle);
  }

  get pendingTimers(): number {
    return this.pending.size;
  }

  /** Resolves once at least `count` timers are pending (a budget, a heartbeat, a slow model's pause). */
  untilTimers(count: number): Promise<void> {
    return eventually(() => this.pending.size >= count, `${count} pending clock timers`);
  }
}

export interface TestServer {
  app: ReturnType<typeof buildServer>["app"];
  ctx: ServerContext;
  clock: TestClock;
  call(method: string, url: string, options?: CallOptions): Promise<Res>;
  /** POST /v1/agents that must succeed; the created record */
  createAgent(body?: Record<string, unknown>, key?: string): Promise<Agent>;
  /** POST …/messages (any outcome) */
  send(agentId: string, body: Record<string, unknown>, key?: string): Promise<Res>;
}

export function makeServer(options: Partial<BuildOptions> = {}): TestServer {
  const clock = options.clock instanceof TestClock ? options.clock : new TestClock();
  const { app, ctx } = buildServer({
    keys: testKeys(),
    windowSeconds: WINDOW_SECONDS,
    messageTimeoutSeconds: BUDGET_SECONDS,
    ...options,
    clock,
  });
  const call = async (method: string, url: string, o: CallOptions = {}): Promise<Res> => {
    const key = o.key === undefined ? KEYS.main : o.key;
    const headers: Record<string, string> = {};
    if (key !== null) headers.authorization = `Bearer ${key}`;
    const payload = o.raw ?? (o.body === undefined ? undefined : JSON.stringify(o.body));
    const contentType = o.contentType === undefined ? (payload === undefined ? null : "application/json") : o.contentType;
    if (contentType !== null) headers["content-type"] = contentType;
    Object.assign(headers, o.headers);
    const res = await app.inject({ method: method as "GET", url, headers, ...(payload === undefined ? {} : { payload }) });
    return toRes(res.statusCode, res.headers, res.body);
  };
  return {
    app,
    ctx,
    clock,
    call,
    async createAgent(body = { name: "Ada" }, key = KEYS.main) {
      return agentOf(await call("POST", "/v1/agents", { key, body }), 201);
    },
    send(agentId, body, key = KEYS.main) {
      return call("POST", `/v1/agents/${agentId}/messages`, { key, body });
    },
  };
}

function toRes(status: number, raw: Record<string, string | string[] | number | undefined>, body: string): Res {
  const headers: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(raw)) headers[k.toLowerCase()] = v === undefined ? undefined : String(v);
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    json = undefined;
  }
  return { status, headers, body, json };
}

/** Seed agents straight into the store: list tests need more than one create window allows. */
export function seedAgents(ctx: ServerContext, accountId: string, bodies: Record<string, unknown>[]): Agent[] {
  return bodies.map((body) => {
    const created = ctx.store.create(accountId, body as Parameters<ServerContext["store"]["create"]>[1]);
    if (!created.ok) throw new Error(`seed rejected: ${JSON.stringify(created.details)}`);
    return created.agent;
  });
}

/* ------------------------------------------------------------------ waiting */

/** Poll a condition on each turn of the event loop (no guessed sleep); fails after `ms`. */
export async function eventually(condition: () => boolean | Promise<boolean>, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise<void>((r) => setTimeout(r, 2));
  }
}

/** Track a promise's settlement without awaiting it. */
export function track<T>(promise: Promise<T>): { readonly settled: boolean; promise: Promise<T> } {
  const state = { settled: false, promise };
  promise.then(
    () => {
      state.settled = true;
    },
    () => {
      state.settled = true;
    },
  );
  return state;
}

/* ------------------------------------------------------------------ fixtures */

/** The boundary fixtures of fixtures/boundaries, through the one expander the functional suites use. */
export { loadBoundaries } from "../../fixtures/expand.js";
