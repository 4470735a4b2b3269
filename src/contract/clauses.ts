/**
 * The PROFILE.md clauses checks cite. A check names a clause id; the meta suite proves every
 * MUST clause has at least one check and every cited id exists here.
 */
export type ClauseLevel = "MUST" | "REFERENCE";

export interface Clause {
  readonly id: string;
  readonly section: string;
  readonly level: ClauseLevel;
  readonly text: string;
}

const c = (id: string, section: string, level: ClauseLevel, text: string): Clause => ({ id, section, level, text });

export const CLAUSES = [
  // §1 Transport
  c("transport.json-content-type", "§1", "MUST", "Every JSON response has Content-Type application/json (charset allowed)."),
  c("transport.request-id", "§1", "MUST", "Every response carries X-Request-Id."),
  c(
    "transport.request-id-echo",
    "§1",
    "MUST",
    "A client X-Request-Id matching ^[A-Za-z0-9._-]{1,128}$ is echoed; otherwise the server makes one.",
  ),
  c("transport.health", "§1", "REFERENCE", 'GET /health (outside /v1, no auth) answers 200 {"status":"ok"}.'),
  // §2 Envelopes
  c("envelope.success", "§2", "MUST", "A success answer is {success: true, data: <object>}."),
  c(
    "envelope.list",
    "§2",
    "MUST",
    "A list answer carries data[] and pagination {page, limit, total, totalPages, hasMore} with totalPages = ceil(total/limit) and hasMore = page < totalPages.",
  ),
  c(
    "envelope.error",
    "§2",
    "MUST",
    "An error answer is {success: false, error: {code, message, details?}}; details[].field names the field or parameter at fault.",
  ),
  // §3 Status ↔ code
  c("status.pairing", "§3", "MUST", "Each HTTP status carries only the codes of the §3 table."),
  c("status.no-5xx-on-input", "§3", "MUST", "A 5xx answer to client input is a defect, except the 500/503 cases of §5."),
  c("status.precedence", "§3", "MUST", "401 beats everything; then 429 RATE_LIMIT_EXCEEDED beats every other error."),
  // §4 Record
  c("record.shape", "§4", "MUST", "The agent record has exactly the §4 fields with their types and bounds."),
  c("record.defaults", "§4", "MUST", "Omitted configuration takes the §4 defaults."),
  c(
    "record.lengths",
    "§4",
    "MUST",
    "String bounds count Unicode code points; out-of-bound values are rejected with 400 naming the field.",
  ),
  c(
    "record.timestamps",
    "§4",
    "MUST",
    "createdAt/updatedAt are RFC 3339 UTC with milliseconds; createdAt never changes; updatedAt changes on every effective update.",
  ),
  c(
    "record.token-write-only",
    "§4",
    "MUST",
    "A platform token never appears in any response; platforms read {enabled, tokenSet}.",
  ),
  c("record.unknown-keys", "§4", "MUST", "An unknown key in a fixed-key object is rejected with 400 INVALID_REQUEST naming it."),
  c("record.read-only-fields", "§4", "MUST", "id, createdAt, updatedAt, tokenSet in a body are rejected with 400 naming them."),
  // §5 Create
  c("create.created", "§5", "MUST", "POST /agents answers 201 with the full record, the body merged over the defaults."),
  c("create.partial-nested", "§5", "MUST", "A nested object may be partial; null is rejected."),
  c("create.status", "§5", "MUST", "status may be active or inactive (default active); error is rejected."),
  c("create.platform-enabled", "§5", "MUST", "A platform needs enabled when it first appears."),
  c("create.rejected-no-effect", "§5", "MUST", "A rejected create (400, 401, 403, 429) creates nothing."),
  // §5 List
  c("list.params", "§5", "MUST", "page ≥ 1, limit 1–100, status/sortBy/order enums; defaults 1, 20, none, createdAt, desc."),
  c(
    "list.invalid-params",
    "§5",
    "MUST",
    "A malformed, out-of-range, non-enum or repeated parameter → 400 naming it; no clamping; unknown ignored.",
  ),
  c("list.order", "§5", "MUST", "Items are sorted by sortBy in order, ties by id in the same direction; strings by code point."),
  c("list.past-end", "§5", "MUST", "A page past the end answers 200 with data [] and the real total and totalPages."),
  c("list.walk", "§5", "MUST", "Walking all pages yields every agent exactly once; items have the Get shape."),
  c("list.filter", "§5", "MUST", "status filters the list to agents in that status."),
  c("list.isolation", "§5", "MUST", "Only the calling account's agents are listed."),
  // §5 Get
  c("get.found", "§5", "MUST", "GET /agents/{id} answers 200 with the record."),
  c("get.not-found", "§5", "MUST", "Unknown, malformed or another account's id → 404 AGENT_NOT_FOUND, never 403."),
  // §5 Update, Delete, Send Message: "every path of that agent answers 404" (Get covers only GET)
  c("agent.not-found", "§5", "MUST", "Update, Delete and Send Message of an unknown agent → 404 AGENT_NOT_FOUND."),
  // §5 Update
  c("update.merge-patch", "§5", "MUST", "PATCH is RFC 7396: objects merge, arrays and scalars replace, null resets or removes."),
  c("update.null-required", "§5", "MUST", "null for name, status or a platform's enabled → 400."),
  c("update.status", "§5", "MUST", "status alone is accepted; active ↔ inactive from any state; error → 400."),
  c("update.noop", "§5", "MUST", "{} is a no-op: 200 and updatedAt unchanged."),
  c("update.content-type", "§5", "MUST", "application/json and application/merge-patch+json are accepted."),
  c("update.rejected-no-effect", "§5", "MUST", "A rejected update changes nothing."),
  // §5 Delete
  c("delete.ok", "§5", "MUST", "DELETE answers 200 {success: true, data: {id, deleted: true}}."),
  c(
    "delete.gone",
    "§5",
    "MUST",
    "After delete every path of the agent answers 404 AGENT_NOT_FOUND, it is gone from lists, its conversations are gone.",
  ),
  c("delete.forbidden", "§5", "MUST", "A key without agents:delete → 403 FORBIDDEN and the agent is untouched."),
  // §5 Send Message
  c(
    "message.body",
    "§5",
    "MUST",
    "text 1–4000 code points not blank; userId/roomId 1–128; context JSON ≤ 16 KiB; stream boolean; unknown key or null → 400.",
  ),
  c(
    "message.reply",
    "§5",
    "MUST",
    "A non-stream reply is {id msg_…, agentId, conversationId, turn, userId, roomId, text, createdAt}.",
  ),
  c(
    "message.conversation",
    "§5",
    "MUST",
    "conversationId is stable per (agent, userId, roomId); with neither, each message opens a new conversation.",
  ),
  c("message.turn", "§5", "MUST", "turn is the 1-based position in the conversation; a failed exchange takes no turn."),
  c(
    "message.stream",
    "§5",
    "MUST",
    "A stream is text/event-stream: delta events, then done whose text is the joined deltas, then close.",
  ),
  c(
    "message.stream-error",
    "§5",
    "MUST",
    "A failure after streaming began is an error event, then close; faults before are JSON errors.",
  ),
  c("message.heartbeat", "§5", "MUST", "While the model is silent the stream carries an SSE comment at least every 15 s."),
  c(
    "message.budget",
    "§5",
    "MUST",
    "Past the time budget: non-stream 503 AGENT_UNAVAILABLE; stream error event AGENT_UNAVAILABLE.",
  ),
  c("message.unavailable", "§5", "MUST", "An inactive or error agent → 503 AGENT_UNAVAILABLE."),
  c(
    "message.model-error",
    "§5",
    "MUST",
    "A model failure → 500 MODEL_ERROR (stream: error event) and the agent's status becomes error.",
  ),
  // §6 Auth
  c(
    "auth.required",
    "§6",
    "MUST",
    "Missing header, another scheme, empty or unknown key → 401 UNAUTHORIZED with WWW-Authenticate: Bearer.",
  ),
  c("auth.scheme-case", "§6", "MUST", "The Bearer scheme matches case-insensitively."),
  c("auth.not-counted", "§6", "MUST", "Unauthenticated requests count against no rate limit."),
  c("auth.permissions", "§6", "MUST", "A missing permission → 403 FORBIDDEN."),
  c("auth.isolation", "§6", "MUST", "Another account's agent is invisible: 404 on every path."),
  c("auth.no-key-echo", "§6", "MUST", "Keys never appear in any response."),
  c("auth.key-hash", "§6", "REFERENCE", "The reference keeps only the SHA-256 of each key and looks keys up by hash."),
  // §7 Limits
  c(
    "limits.headers",
    "§7",
    "MUST",
    "Every authenticated response carries X-RateLimit-Limit/Remaining/Reset of the tightest bucket; Reset is after now and ≤ W+1 s ahead.",
  ),
  c("limits.endpoint-bucket", "§7", "MUST", "Per key and endpoint: Create 10, List 60, Get 60, Update 30, Delete 10 per window."),
  c("limits.agent-bucket", "§7", "MUST", "Per agent: Send Message 60 per window, across all keys of the account."),
  c("limits.tier", "§7", "MUST", "Per account, all endpoints together: the tier limit per window."),
  c("limits.429", "§7", "MUST", "An empty bucket → 429 RATE_LIMIT_EXCEEDED with Retry-After ≥ 1, Remaining 0, and no effect."),
  c("limits.429-not-counted", "§7", "MUST", "A 429 RATE_LIMIT_EXCEEDED is counted in no bucket."),
  c("limits.recovery", "§7", "MUST", "After the reset time passes, requests succeed again."),
  c("limits.concurrency", "§7", "MUST", "At most 10 Send Message in flight per agent; the 11th → 429 with Retry-After: 1."),
  c(
    "limits.quota",
    "§7",
    "MUST",
    "A spent message quota → 429 INSUFFICIENT_QUOTA without Retry-After; other endpoints keep working.",
  ),
  c("limits.body-size", "§7", "MUST", "A body over 65,536 bytes → 400 INVALID_REQUEST (or 413 PAYLOAD_TOO_LARGE)."),
  c(
    "limits.content-type",
    "§7",
    "MUST",
    "POST/PATCH without application/json → 400 (or 415); malformed or non-object JSON → 400.",
  ),
  // §8 Status
  c(
    "status.lifecycle",
    "§8",
    "MUST",
    "Created active unless inactive was asked; only the service sets error; inactive keeps config and history.",
  ),
  // §9 Routing
  c(
    "routing.unknown",
    "§9",
    "MUST",
    "An unknown path under base_url → 404 NOT_FOUND after auth; a lacking method → 404 or 405 with Allow.",
  ),
  c("routing.empty-id", "§9", "MUST", "/agents/ with an empty id → 404."),
  c(
    "routing.variants",
    "§9",
    "MUST",
    "A path variant (trailing slash, case, percent-encoding) answers 404 or shares the same buckets.",
  ),
  // §10 Reference-compatible
  c(
    "reference.mock-models",
    "§10",
    "REFERENCE",
    "mock-slow streams ≥ 20 deltas over ~2 s; mock-error fails with MODEL_ERROR; mock-timeout spends the budget.",
  ),
  c("reference.deterministic", "§10", "REFERENCE", "Replies are a deterministic function of the agent, the text and the turn."),
  c(
    "reference.start-options",
    "§10",
    "REFERENCE",
    "Keys, accounts, tiers, permissions, quotas, W and the time budget are set at start.",
  ),
] as const satisfies readonly Clause[];

export type ClauseId = (typeof CLAUSES)[number]["id"];

export const CLAUSE_BY_ID: ReadonlyMap<string, Clause> = new Map(CLAUSES.map((cl) => [cl.id, cl]));

export function clause(id: ClauseId): Clause {
  const found = CLAUSE_BY_ID.get(id);
  if (!found) throw new Error(`unknown PROFILE clause ${id}`);
  return found;
}
