import {
  AGENT_DEFAULTS,
  AGENT_STATUSES,
  type Agent,
  type AgentStatus,
  compareCodePoints,
  isRecord,
  PLATFORMS,
  SORT_FIELDS,
  SORT_ORDERS,
} from "../contract/index.js";

/**
 * The simplified model of the service for property and stateful tests (STYLE §8): what the
 * target should answer, predicted from PROFILE §4–§5 alone. It never imports server code; it
 * keeps agents as plain configuration objects and predicts with the plainest rules that say
 * the same thing as PROFILE (RFC 7396 merge, code-point order, one conversation per key).
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export const isJson = (v: unknown): v is Json =>
  v === null ||
  typeof v === "boolean" ||
  typeof v === "number" ||
  typeof v === "string" ||
  (Array.isArray(v) ? v.every(isJson) : isRecord(v) && Object.values(v).every(isJson));

/** A JSON round trip on purpose: the copy reads as the wire would (-0 is 0, undefined fields go). */
function copy(v: Json): Json {
  if (v === undefined) return v; // a field left undefined at run time stays so (JSON.parse would throw)
  // JSON.parse gives JSON by definition: walking the copy to prove it again cost more than the copy
  const back: Json = JSON.parse(JSON.stringify(v));
  return back;
}

function copyObject(v: JsonObject): JsonObject {
  const back = copy(v);
  if (!isRecord(back)) throw new Error("a JSON round trip of an object gave back something else");
  return back;
}

/** What the model knows of one agent: its configuration as sent (tokens included) and what the target made. */
export interface ModelAgent {
  id: string;
  config: JsonObject;
  createdAt: string;
  updatedAt: string;
}

/** The record an agent must read as, without the fields the target makes (id, timestamps). */
type PredictedRecord = Omit<Agent, "id" | "createdAt" | "updatedAt">;

/** RFC 7396 over the stored configuration; `null` resets to the PROFILE §4 default, or removes a field that has none. */
function mergePatch(target: JsonObject, patch: JsonObject, defaults: Json | undefined): JsonObject {
  const out = copyObject(target);
  mergeInto(out, patch, defaults);
  return out;
}

/** The merge, in place on a copy of its own (one copy for the whole patch, not one per nested object). */
function mergeInto(out: JsonObject, patch: JsonObject, defaults: Json | undefined): void {
  for (const [key, value] of Object.entries(patch)) {
    const fallback = isRecord(defaults) ? defaults[key] : undefined;
    if (value === null) {
      if (fallback === undefined) delete out[key];
      else out[key] = copy(fallback);
    } else if (isRecord(value)) {
      const inner = out[key];
      const nested: JsonObject = isRecord(inner) ? inner : {};
      mergeInto(nested, value, fallback);
      out[key] = nested;
    } else out[key] = copy(value);
  }
}

/** PROFILE §4 defaults as the JSON they are (the contract declares them read-only). */
function defaultsAsJson(): JsonObject {
  const defaults: unknown = AGENT_DEFAULTS;
  if (!isJson(defaults) || !isRecord(defaults)) throw new Error("AGENT_DEFAULTS is not a JSON object");
  return defaults;
}
const DEFAULTS = defaultsAsJson();

/** PROFILE §5: a platform needs `enabled` when it first appears: the field a 400 must name, if any. */
function platformWithoutEnabled(config: JsonObject): string | undefined {
  const platforms = isRecord(config.platforms) ? config.platforms : {};
  const missing = PLATFORMS.find((p) => {
    const platform = platforms[p];
    return isRecord(platform) && typeof platform.enabled !== "boolean";
  });
  return missing && `platforms.${missing}.enabled`;
}

/** PROFILE §4: tokens are write-only; a platform reads `{enabled, tokenSet}`. */
function predictRecord(config: JsonObject): PredictedRecord {
  const platforms: Record<string, { enabled: boolean; tokenSet: boolean }> = {};
  for (const [name, p] of Object.entries(isRecord(config.platforms) ? config.platforms : {}))
    if (isRecord(p)) platforms[name] = { enabled: p.enabled === true, tokenSet: typeof p.token === "string" };
  const { platforms: _p, ...rest } = config;
  // cast: the model keeps configurations as plain JSON; it predicts only from ones a valid body made, and does not re-parse with the contract's schema (STYLE §8)
  return { ...copyObject(rest), platforms } as PredictedRecord;
}

/** The record as the target shows it, compared field by field with the prediction. */
export function recordOf(agent: ModelAgent): Agent {
  return { id: agent.id, ...predictRecord(agent.config), createdAt: agent.createdAt, updatedAt: agent.updatedAt };
}

export type Prediction<T> = { ok: true; value: T } | { ok: false; field: string };

/** PROFILE §5 Create: defaults with the body merged in (nested objects may be partial). */
export function predictCreate(body: JsonObject): Prediction<JsonObject> {
  const config = mergePatch(DEFAULTS, body, DEFAULTS);
  const missing = platformWithoutEnabled(config);
  return missing ? { ok: false, field: missing } : { ok: true, value: config };
}

/** PROFILE §5 Update: the previous configuration with the patch merged; `changed` moves updatedAt. */
export function predictUpdate(previous: JsonObject, patch: JsonObject): Prediction<{ config: JsonObject; changed: boolean }> {
  const config = mergePatch(previous, patch, DEFAULTS);
  const missing = platformWithoutEnabled(config);
  if (missing) return { ok: false, field: missing };
  return { ok: true, value: { config, changed: canonicalJson(config) !== canonicalJson(previous) } };
}

/** JSON text with every object's keys in order: equal for equal values, whatever order the fields came in. */
export const canonicalJson = (v: Json): string => JSON.stringify(sorted(v));

function sorted(v: Json): Json {
  if (Array.isArray(v)) return v.map(sorted);
  if (!isRecord(v)) return v;
  return Object.fromEntries(
    Object.entries(v)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, x]) => [k, sorted(x)]),
  );
}

/* -------------------------------------------------------------------- list */

export interface ModelListQuery {
  page: number;
  limit: number;
  status?: AgentStatus | undefined;
  sortBy: "createdAt" | "name" | "status";
  order: "asc" | "desc";
}

/** PROFILE §5 List: filter, order by sortBy with an id tiebreak in the same direction, slice, totals. */
export function predictList(records: readonly Agent[], q: ModelListQuery) {
  const kept = records.filter((r) => q.status === undefined || r.status === q.status);
  const key = (r: Agent, other: Agent) =>
    q.sortBy === "createdAt"
      ? Date.parse(r.createdAt) - Date.parse(other.createdAt)
      : compareCodePoints(r[q.sortBy], other[q.sortBy]);
  const sign = q.order === "asc" ? 1 : -1;
  const ordered = [...kept].sort((a, b) => sign * (Math.sign(key(a, b)) || Math.sign(compareCodePoints(a.id, b.id))));
  const start = (q.page - 1) * q.limit;
  const total = ordered.length;
  const totalPages = Math.ceil(total / q.limit);
  return {
    ids: ordered.slice(start, start + q.limit).map((r) => r.id),
    pagination: { page: q.page, limit: q.limit, total, totalPages, hasMore: q.page < totalPages },
  };
}

/** A sent list query read the way PROFILE §5 says (`01` is 1); only for queries the generator made valid. */
export function readListQuery(sent: Record<string, string | string[]>): ModelListQuery {
  const one = (name: string) => {
    const v = sent[name];
    return Array.isArray(v) ? v[0] : v;
  };
  return {
    page: one("page") === undefined ? 1 : Number(one("page")),
    limit: one("limit") === undefined ? 20 : Number(one("limit")),
    status: AGENT_STATUSES.find((s) => s === one("status")),
    sortBy: SORT_FIELDS.find((f) => f === one("sortBy")) ?? "createdAt",
    order: SORT_ORDERS.find((o) => o === one("order")) ?? "desc",
  };
}

/* ------------------------------------------------------------ conversations */

/**
 * PROFILE §5: one conversation per (agent, userId, roomId) — with neither, a new one each
 * time; `turn` counts the completed exchanges of the conversation.
 */
export class ConversationModel {
  private readonly byKey = new Map<string, { id?: string; turns: number }>();
  private readonly seen = new Map<string, string>();

  /** The key of a message's conversation, or undefined when each message opens a new one. */
  static key(agentId: string, userId?: string, roomId?: string): string | undefined {
    return userId === undefined && roomId === undefined ? undefined : JSON.stringify([agentId, userId ?? null, roomId ?? null]);
  }

  /** The turn the next completed exchange of this conversation takes. */
  nextTurn(key: string | undefined): number {
    return key === undefined ? 1 : (this.byKey.get(key)?.turns ?? 0) + 1;
  }

  /** The conversation id this key must answer with, when the model has seen it already. */
  expectedId(key: string | undefined): string | undefined {
    return key === undefined ? undefined : this.byKey.get(key)?.id;
  }

  /** Which conversation key, if any, already holds this id (an id must not be shared across keys). */
  ownerOf(conversationId: string): string | undefined {
    return this.seen.get(conversationId);
  }

  /** The (userId, roomId) of each conversation of the agent the model holds, oldest first. */
  conversationsOf(agentId: string): { userId: string | undefined; roomId: string | undefined }[] {
    const out: { userId: string | undefined; roomId: string | undefined }[] = [];
    for (const key of this.byKey.keys()) {
      // a key is JSON.stringify([agentId, userId, roomId]) (ConversationModel.key)
      const [agent, userId, roomId]: unknown[] = JSON.parse(key);
      const part = (v: unknown) => (typeof v === "string" ? v : undefined);
      if (agent === agentId) out.push({ userId: part(userId), roomId: part(roomId) });
    }
    return out;
  }

  completed(key: string | undefined, conversationId: string): void {
    this.seen.set(conversationId, key ?? `single:${conversationId}`);
    if (key === undefined) return;
    const entry = this.byKey.get(key) ?? { turns: 0 };
    entry.id = conversationId;
    entry.turns++;
    this.byKey.set(key, entry);
  }

  /** PROFILE §5 Delete: an agent's conversations go with it. */
  forgetAgent(agentId: string): void {
    // a key is JSON.stringify([agentId, userId, roomId]) (ConversationModel.key)
    const prefix = `${JSON.stringify([agentId]).slice(0, -1)},`;
    for (const key of [...this.byKey.keys()]) if (key.startsWith(prefix)) this.byKey.delete(key);
  }
}
