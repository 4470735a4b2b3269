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

/** PROFILE's clauses by section: id → what it requires. */
const CLAUSE_TEXTS = {
  "§1": {
    // Transport
    "transport.json-content-type": "Every JSON response has Content-Type application/json (charset allowed).",
    "transport.request-id": "Every response carries X-Request-Id.",
    "transport.request-id-echo":
      "A client X-Request-Id matching ^[A-Za-z0-9._-]{1,128}$ is echoed; otherwise the server makes one.",
    "transport.health": 'GET /health (outside /v1, no auth) answers 200 {"status":"ok"}.',
  },
  "§2": {
    // Envelopes
    "envelope.success": "A success answer is {success: true, data: <object>}.",
    "envelope.list":
      "A list answer carries data[] and pagination {page, limit, total, totalPages, hasMore} with totalPages = ceil(total/limit) and hasMore = page < totalPages.",
    "envelope.error":
      "An error answer is {success: false, error: {code, message, details?}}; details[].field names the field or parameter at fault.",
  },
  "§3": {
    // Status ↔ code
    "status.pairing": "Each HTTP status carries only the codes of the §3 table.",
    "status.no-5xx-on-input": "A 5xx answer to client input is a defect, except the 500/503 cases of §5.",
    "status.precedence": "401 beats everything; then 429 RATE_LIMIT_EXCEEDED beats every other error.",
  },
  "§4": {
    // Record
    "record.shape": "The agent record has exactly the §4 fields with their types and bounds.",
    "record.defaults": "Omitted configuration takes the §4 defaults.",
    "record.lengths":
      "String bounds count Unicode code points; out-of-bound values are rejected with 400 INVALID_REQUEST (details, when given, name the field).",
    "record.timestamps":
      "createdAt/updatedAt are RFC 3339 UTC with milliseconds; createdAt never changes; updatedAt changes on every effective update.",
    "record.token-write-only": "A platform token never appears in any response; platforms read {enabled, tokenSet}.",
    "record.unknown-keys": "An unknown key in a fixed-key object is rejected with 400 INVALID_REQUEST naming it.",
    "record.read-only-fields": "id, createdAt, updatedAt, tokenSet in a body are rejected with 400 naming them.",
  },
  "§5": {
    // Create
    "create.created": "POST /agents answers 201 with the full record, the body merged over the defaults.",
    "create.partial-nested": "A nested object may be partial; null is rejected.",
    "create.status": "status may be active or inactive (default active); error is rejected.",
    "create.platform-enabled": "A platform needs enabled when it first appears.",
    "create.rejected-no-effect": "A rejected create (400, 401, 403, 429) creates nothing.",
    // List
    "list.params": "page ≥ 1, limit 1–100, status/sortBy/order enums; defaults 1, 20, none, createdAt, desc.",
    "list.invalid-params":
      "A malformed, out-of-range, non-enum or repeated parameter → 400 naming it; no clamping; unknown ignored.",
    "list.order": "Items are sorted by sortBy in order, ties by id in the same direction; strings by code point.",
    "list.past-end": "A page past the end answers 200 with data [] and the real total and totalPages.",
    "list.walk": "Walking all pages yields every agent exactly once; items have the Get shape.",
    "list.filter": "status filters the list to agents in that status.",
    "list.isolation": "Only the calling account's agents are listed.",
    // Get
    "get.found": "GET /agents/{id} answers 200 with the record.",
    "get.not-found": "Unknown, malformed or another account's id → 404 AGENT_NOT_FOUND, never 403.",
    // Update, Delete, Send Message: "every path of that agent answers 404" (Get covers only GET)
    "agent.not-found": "Update, Delete and Send Message of an unknown agent → 404 AGENT_NOT_FOUND.",
    // Update
    "update.merge-patch": "PATCH is RFC 7396: objects merge, arrays and scalars replace, null resets or removes.",
    "update.null-required": "null for name, status or a platform's enabled → 400.",
    "update.status": "status alone is accepted; active ↔ inactive from any state; error → 400.",
    "update.noop": "{} is a no-op: 200 and updatedAt unchanged.",
    "update.content-type": "application/json and application/merge-patch+json are accepted.",
    "update.rejected-no-effect": "A rejected update changes nothing.",
    // Delete
    "delete.ok": "DELETE answers 200 {success: true, data: {id, deleted: true}}.",
    "delete.gone":
      "After delete every path of the agent answers 404 AGENT_NOT_FOUND, it is gone from lists, its conversations are gone.",
    "delete.forbidden": "A key without agents:delete → 403 FORBIDDEN and the agent is untouched.",
    // Send Message
    "message.body":
      "text 1–4000 code points not blank; userId/roomId 1–128; context JSON ≤ 16 KiB; stream boolean; unknown key or null → 400.",
    "message.reply": "A non-stream reply is {id msg_…, agentId, conversationId, turn, userId, roomId, text, createdAt}.",
    "message.conversation":
      "conversationId is stable per (agent, userId, roomId); with neither, each message opens a new conversation.",
    "message.turn": "turn is the 1-based position in the conversation; a failed exchange takes no turn.",
    "message.stream": "A stream is text/event-stream: delta events, then done whose text is the joined deltas, then close.",
    "message.stream-error": "A failure after streaming began is an error event, then close; faults before are JSON errors.",
    "message.heartbeat": "While the model is silent the stream carries an SSE comment at least every 15 s.",
    "message.budget": "Past the time budget: non-stream 503 AGENT_UNAVAILABLE; stream error event AGENT_UNAVAILABLE.",
    "message.unavailable": "An inactive or error agent → 503 AGENT_UNAVAILABLE.",
    "message.model-error": "A model failure → 500 MODEL_ERROR (stream: error event) and the agent's status becomes error.",
  },
  "§6": {
    // Auth
    "auth.required": "Missing header, another scheme, empty or unknown key → 401 UNAUTHORIZED with WWW-Authenticate: Bearer.",
    "auth.scheme-case": "The Bearer scheme matches case-insensitively.",
    "auth.not-counted": "Unauthenticated requests count against no rate limit.",
    "auth.permissions": "A missing permission → 403 FORBIDDEN.",
    "auth.isolation": "Another account's agent is invisible: 404 on every path.",
    "auth.no-key-echo": "Keys never appear in any response.",
    "auth.key-hash": "The reference keeps only the SHA-256 of each key and looks keys up by hash.",
  },
  "§7": {
    // Limits
    "limits.headers":
      "Every authenticated response carries X-RateLimit-Limit/Remaining/Reset of the tightest bucket; Reset is after now and ≤ W+1 s ahead.",
    "limits.endpoint-bucket": "Per key and endpoint: Create 10, List 60, Get 60, Update 30, Delete 10 per window.",
    "limits.agent-bucket": "Per agent: Send Message 60 per window, across all keys of the account.",
    "limits.tier": "Per account, all endpoints together: the tier limit per window.",
    "limits.429": "An empty bucket → 429 RATE_LIMIT_EXCEEDED with Retry-After ≥ 1, Remaining 0, and no effect.",
    "limits.429-not-counted": "A 429 RATE_LIMIT_EXCEEDED is counted in no bucket.",
    "limits.recovery": "After the reset time passes, requests succeed again.",
    "limits.concurrency": "At most 10 Send Message in flight per agent; the 11th → 429 with Retry-After: 1.",
    "limits.quota": "A spent message quota → 429 INSUFFICIENT_QUOTA without Retry-After; other endpoints keep working.",
    "limits.body-size": "A body over 65,536 bytes → 400 INVALID_REQUEST (or 413 PAYLOAD_TOO_LARGE).",
    "limits.content-type": "POST/PATCH without application/json → 400 (or 415); malformed or non-object JSON → 400.",
  },
  "§8": {
    // Status
    "status.lifecycle":
      "Created active unless inactive was asked; only the service sets error; inactive keeps config and history.",
  },
  "§9": {
    // Routing
    "routing.unknown": "An unknown path under base_url → 404 NOT_FOUND after auth; a lacking method → 404 or 405 with Allow.",
    "routing.empty-id": "/agents/ with an empty id → 404.",
    "routing.variants": "A path variant (trailing slash, case, percent-encoding) answers 404 or shares the same buckets.",
  },
  "§10": {
    // Reference-compatible
    "reference.mock-models":
      "mock-slow streams ≥ 20 deltas over ~2 s; mock-error fails with MODEL_ERROR; mock-timeout spends the budget.",
    "reference.deterministic": "Replies are a deterministic function of the agent, the text and the turn.",
    "reference.start-options": "Keys, accounts, tiers, permissions, quotas, W and the time budget are set at start.",
  },
} as const;

type ClauseTexts = typeof CLAUSE_TEXTS;
export type ClauseId = { [S in keyof ClauseTexts]: keyof ClauseTexts[S] }[keyof ClauseTexts];

/** The clauses that bind only the reference server (PROFILE §10 and its kin); every other one is a MUST. */
const REFERENCE_ONLY: ReadonlySet<string> = new Set<ClauseId>([
  "transport.health",
  "auth.key-hash",
  "reference.mock-models",
  "reference.deterministic",
  "reference.start-options",
]);

export const CLAUSES: readonly Clause[] = Object.entries(CLAUSE_TEXTS).flatMap(([section, texts]) =>
  Object.entries(texts).map(
    ([id, text]): Clause => ({ id, section, level: REFERENCE_ONLY.has(id) ? "REFERENCE" : "MUST", text }),
  ),
);

/**
 * The rejections PROFILE requires to name the field at fault: an unknown key and a read-only
 * field "naming it" (§4), a list parameter "naming the parameter" (§5 List). Any other 400 may
 * leave `details` out (§2: "details is optional"); when it gives them, §2 has `field` name the
 * field at fault, so a details entry naming some other field is still a finding.
 */
export const FIELD_NAMED_BY: ReadonlySet<ClauseId> = new Set<ClauseId>([
  "record.unknown-keys",
  "record.read-only-fields",
  "list.invalid-params",
]);

export const CLAUSE_BY_ID: ReadonlyMap<string, Clause> = new Map(CLAUSES.map((cl) => [cl.id, cl]));

/** PROFILE's sections that hold clauses, in order (§1, §2, …). */
export const SECTIONS: readonly string[] = Object.keys(CLAUSE_TEXTS);

/**
 * Whether a check citing `clauseIds` is in a selection of sections and clause ids (`--sections
 * §7,list.order`: every check citing a clause of §7, or list.order itself).
 */
export function selects(selection: readonly string[], clauseIds: readonly string[]): boolean {
  return clauseIds.some((id) => {
    const known = CLAUSE_BY_ID.get(id);
    return known ? chosenIn(selection, known) : selection.includes(id);
  });
}

/** Whether a selection of sections and clause ids (`--sections`) takes in `clause`. */
export function chosenIn(selection: readonly string[], clause: Pick<Clause, "id" | "section">): boolean {
  return selection.includes(clause.id) || selection.includes(clause.section);
}

/** The vitest tags of a check citing `clauseIds`: its sections and its clauses, as `--sections` selects them. */
export function selectionTags(clauseIds: readonly string[]): string[] {
  return [...new Set(clauseIds.map((id) => CLAUSE_BY_ID.get(id)?.section ?? "?")), ...clauseIds];
}

export function clause(id: ClauseId): Clause {
  const found = CLAUSE_BY_ID.get(id);
  if (!found) throw new Error(`unknown PROFILE clause ${id}`);
  return found;
}
