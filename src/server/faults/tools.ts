import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import {
  AGENT_DEFAULTS,
  type Agent,
  type ClauseId,
  createAgentBodySchema,
  type EndpointId,
  isRecord,
  paginationFor,
  updateAgentBodySchema,
} from "../../contract/index.js";
import type { ServerContext } from "../context.js";
import type { FaultSeam } from "../seam.js";

/**
 * Injected defects: each breaks one PROFILE clause, so the harness can prove it catches it.
 * They wrap the server from outside (hooks, wrapped store and limiter methods) and never
 * appear in its normal code paths.
 */
export interface Fault {
  readonly clause: ClauseId;
  readonly description: string;
  install(app: FastifyInstance, ctx: ServerContext): void;
}

export type Obj = Record<string, unknown>;
type Store = ServerContext["store"];

export const endpointOf = (req: FastifyRequest): EndpointId | undefined => req.routeOptions.config?.endpoint;
export const accountOf = (req: FastifyRequest): string | undefined => req.principal?.account.id;

/** The request body as JSON, when it is a JSON object (bodies reach routes as raw buffers). */
export function jsonBody(req: FastifyRequest): Obj | undefined {
  if (!Buffer.isBuffer(req.body)) return undefined;
  try {
    const value: unknown = JSON.parse(req.body.toString("utf8"));
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** JSON text as an object; {} when it is not one. */
export function parseObj(text: string): Obj {
  const value: unknown = JSON.parse(text);
  return isRecord(value) ? value : {};
}

const setJsonBody = (req: FastifyRequest, body: Obj) => {
  req.body = Buffer.from(JSON.stringify(body));
};

/** Rewrite a body before its route reads it. */
export function rewriteBody(
  app: FastifyInstance,
  endpoints: readonly EndpointId[],
  rewrite: (body: Obj, req: FastifyRequest) => void,
) {
  app.addHook("preHandler", async (req) => {
    const endpoint = endpointOf(req);
    if (!endpoint || !endpoints.includes(endpoint)) return;
    const body = jsonBody(req);
    if (!body) return;
    rewrite(body, req);
    setJsonBody(req, body);
  });
}

/** Rewrite JSON answers on their way out. */
export function rewriteJson(app: FastifyInstance, rewrite: (body: Obj, req: FastifyRequest, reply: FastifyReply) => void) {
  app.addHook("onSend", async (req, reply, payload) => {
    if (typeof payload !== "string" || !String(reply.getHeader("content-type") ?? "").includes("json")) return payload;
    const body: unknown = JSON.parse(payload);
    if (!isRecord(body)) return payload;
    rewrite(body, req, reply);
    return JSON.stringify(body);
  });
}

/** Replace an error answer with another one (status and envelope). */
export function replaceError(reply: FastifyReply, body: Obj, status: number, code: string) {
  reply.code(status);
  for (const key of Object.keys(body)) delete body[key];
  Object.assign(body, { success: false, error: { code, message: "replaced by an injected fault" } });
}

export const errorCode = (body: Obj) => (isRecord(body.error) ? body.error.code : undefined);

/** The agent records in a success answer (one, or a list). */
export function agentsIn(body: Obj): Obj[] {
  if (body.success !== true) return [];
  const data = body.data;
  const items = Array.isArray(data) ? data : [data];
  return items.filter((a): a is Obj => isRecord(a) && "createdAt" in a && "name" in a);
}

/**
 * Rewrite the event-stream frames of each Send Message (streams bypass onSend). `perStream`
 * makes the rewriter of one response; it returns the frame to write, or null to drop it.
 */
export function rewriteStream(ctx: ServerContext, perStream: () => (frame: string) => string | null) {
  const before = ctx.seam.streamFrames;
  ctx.seam.streamFrames = () => {
    const earlier = before();
    const rewrite = perStream();
    return (frame) => {
      const out = earlier(frame);
      return out === null ? null : rewrite(out);
    };
  };
}

/** Change the rate buckets of each request, after any fault installed earlier did. */
export function rewriteBuckets(ctx: ServerContext, rewrite: FaultSeam["rateBuckets"]) {
  const before = ctx.seam.rateBuckets;
  ctx.seam.rateBuckets = (buckets, principal, req) => rewrite(before(buckets, principal, req), principal, req);
}

/** Wrap one method of an object in place. */
export function wrap<T extends Record<K, (...args: never[]) => unknown>, K extends keyof T>(
  target: T,
  key: K,
  make: (orig: T[K]) => T[K],
): void {
  // cast: bound, so the original keeps its `this`; TypeScript cannot see that binding a generic method keeps its type
  const orig = target[key].bind(target) as T[K];
  target[key] = make(orig);
}

type Patch = Parameters<Store["update"]>[2];
type UpdateResult = ReturnType<Store["update"]>;

/**
 * Wrap the store's update, seeing the agent as it was before it: `make` calls `update` (with the
 * patch, or another) and changes what it gave, or answers in its place.
 */
export function wrapUpdate(
  store: Store,
  make: (
    call: { accountId: string; id: string; patch: Patch; before: Agent | undefined },
    update: (patch: Patch) => UpdateResult,
  ) => UpdateResult,
): void {
  wrap(
    store,
    "update",
    (orig) => (accountId, id, patch) =>
      make({ accountId, id, patch, before: store.get(accountId, id) }, (sent) => orig(accountId, id, sent)),
  );
}

/** Change what each update gave (`written`), seeing the agent as it was before it. */
export function afterUpdate(
  store: Store,
  then: (call: { accountId: string; id: string; patch: Patch; before: Agent | undefined }, written: UpdateResult) => UpdateResult,
): void {
  wrapUpdate(store, (call, update) => then(call, update(call.patch)));
}

/** Move an agent's updatedAt and nothing else (two status commits that cancel out); the write's result as stored now. */
export function touched(store: Store, accountId: string, id: string, written: Agent): UpdateResult {
  const status = written.status;
  store.setStatus(accountId, id, status === "active" ? "inactive" : "active");
  store.setStatus(accountId, id, status);
  return { ok: true, agent: store.get(accountId, id) ?? written };
}

/** Each create and update stores its body as `rewrite` changes it (answers read the stored record back). */
export function rewriteWrites(store: Store, rewrite: <T extends Obj>(body: T) => T): void {
  wrap(store, "create", (orig) => (accountId, body) => orig(accountId, rewrite(body)));
  wrap(store, "update", (orig) => (accountId, id, patch) => orig(accountId, id, rewrite(patch)));
}

/** Tell `created` of each agent a create stores (and the body it was made from). */
export function onCreated(
  store: Store,
  created: (agent: Agent, accountId: string, body: Parameters<Store["create"]>[1]) => void,
): void {
  wrap(store, "create", (orig) => (accountId, body) => {
    const r = orig(accountId, body);
    if (r.ok) created(r.agent, accountId, body);
    return r;
  });
}

/** The accounts that have created agents (for defects that reach across accounts). */
export function trackAccounts(store: Store): Set<string> {
  const accounts = new Set<string>();
  wrap(store, "create", (orig) => (accountId, body) => {
    accounts.add(accountId);
    return orig(accountId, body);
  });
  return accounts;
}

export const ALL = Number.MAX_SAFE_INTEGER;

type ListQuery = Parameters<Store["list"]>[1];
/** Lists answered in another order when `applies` (the whole list sorted, then the page cut). */
export function reorderList(
  store: Store,
  applies: (q: ListQuery) => boolean,
  compare: (q: ListQuery) => (x: Agent, y: Agent) => number,
): void {
  wrap(store, "list", (orig) => (accountId, q) => {
    if (!applies(q)) return orig(accountId, q);
    const all = orig(accountId, { ...q, page: 1, limit: ALL }).data;
    all.sort(compare(q));
    const start = (q.page - 1) * q.limit;
    return { data: all.slice(start, start + q.limit), pagination: paginationFor(q.page, q.limit, all.length) };
  });
}
export const BODY_KEYS = new Set([...Object.keys(createAgentBodySchema.shape), ...Object.keys(updateAgentBodySchema.shape)]);
export const NESTED_KEYS: Record<string, string[]> = {
  personality: Object.keys(AGENT_DEFAULTS.personality),
  knowledge: Object.keys(AGENT_DEFAULTS.knowledge),
  goals: Object.keys(AGENT_DEFAULTS.goals),
  modelSettings: ["provider", "model", "temperature", "maxTokens"],
};

export function withoutNulls(value: Obj): Obj {
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== null)
      .map(([k, v]) => [k, isRecord(v) ? withoutNulls(v) : v]),
  );
}

export const fault = (clause: ClauseId, description: string, install: Fault["install"]): Fault => ({
  clause,
  description,
  install,
});

/** The faults of one area, by name; `index.ts` merges the areas. */
export type FaultRecord = Readonly<Record<string, Fault>>;
