import { z } from "zod";
import { errorCodeSchema } from "./errors.js";
import { FIELD_LIMITS as F, LIST_LIMITS, MESSAGE_LIMITS as M } from "./limits.js";
import { cpString } from "./text.js";

/* ------------------------------------------------------------------ basics */

export const AGENT_STATUSES = ["active", "inactive", "error"] as const;
export const agentStatusSchema = z.enum(AGENT_STATUSES);
export type AgentStatus = z.infer<typeof agentStatusSchema>;

/** PROFILE §5 Create / Update: a client may set these; `error` is the service's alone (§8). */
export const clientStatusSchema = z.enum(["active", "inactive"]);

export const PLATFORMS = ["discord", "twitter", "telegram"] as const;
export type Platform = (typeof PLATFORMS)[number];

/** One schema per PROFILE §4 platform (checked against PLATFORMS by `satisfies`). */
/** One value per platform of PROFILE §4 (a schema, an arbitrary), keyed by platform. */
export const perPlatform = <T>(value: T) => ({ discord: value, twitter: value, telegram: value }) satisfies Record<Platform, T>;

export const SORT_FIELDS = ["createdAt", "name", "status"] as const;
export const SORT_ORDERS = ["asc", "desc"] as const;

/** PROFILE §4: RFC 3339 UTC with milliseconds, e.g. 2026-11-21T23:16:10.123Z. */
export const TIMESTAMP_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const timestampSchema = z
  .string()
  .regex(TIMESTAMP_PATTERN)
  .refine((v) => !Number.isNaN(Date.parse(v)) && new Date(v).toISOString() === v, "must be a real instant");

export const agentIdSchema = z.string().regex(F.agentId.pattern);

const bounded = (limit: { min: number; max: number }) => cpString(limit.min, limit.max);
const list = (limit: { min: number; max: number; maxItems: number }) => z.array(bounded(limit)).max(limit.maxItems);

const pluginsSchema = z
  .array(z.string().regex(F.plugin.pattern))
  .max(F.plugin.maxItems)
  .refine((ids) => new Set(ids).size === ids.length, "plugin ids must be unique")
  // the refinement says it to zod; this says it to JSON Schema (and so to the OpenAPI document)
  .meta({ uniqueItems: true });

const temperatureSchema = z.number().min(F.temperature.min).max(F.temperature.max);
const maxTokensSchema = z.number().int().min(F.maxTokens.min).max(F.maxTokens.max);
const nameSchema = cpString(F.name.min, F.name.max, { notBlank: true });
const bioSchema = bounded(F.bio);
/** A platform token: write-only; PROFILE pins no length, so only non-empty is asked. */
const tokenSchema = z.string().min(1);

/* ------------------------------------------------------------- the record */

/** PROFILE §4: how a platform reads in a response — never a token. */
export const platformViewSchema = z.strictObject({ enabled: z.boolean(), tokenSet: z.boolean() });

export const agentConfigShape = {
  personality: z.strictObject({ traits: list(F.trait) }),
  knowledge: z.strictObject({ expertise: list(F.expertise), knowledgeBases: list(F.knowledgeBase) }),
  goals: z.strictObject({ objectives: list(F.objective), motivations: list(F.motivation) }),
  modelSettings: z.strictObject({
    provider: bounded(F.provider),
    model: bounded(F.model),
    temperature: temperatureSchema.optional(),
    maxTokens: maxTokensSchema.optional(),
  }),
};

export const agentSchema = z
  .strictObject({
    id: agentIdSchema,
    name: nameSchema,
    bio: bioSchema,
    ...agentConfigShape,
    platforms: z.strictObject(perPlatform(platformViewSchema.optional())),
    plugins: pluginsSchema,
    status: agentStatusSchema,
    createdAt: timestampSchema,
    updatedAt: timestampSchema,
  })
  .meta({ id: "Agent" });
export type Agent = z.infer<typeof agentSchema>;

const noStrings: readonly string[] = [];

/** PROFILE §4 defaults: the record a create starts from. */
export const AGENT_DEFAULTS = {
  bio: "",
  personality: { traits: noStrings },
  knowledge: { expertise: noStrings, knowledgeBases: noStrings },
  goals: { objectives: noStrings, motivations: noStrings },
  platforms: {},
  plugins: noStrings,
  modelSettings: { provider: "mock", model: "mock-1" },
  status: "active",
} as const;

/** Read-only record fields: rejected in any body (PROFILE §4). */
export const READ_ONLY_FIELDS = ["id", "createdAt", "updatedAt", "tokenSet"] as const;

/* ------------------------------------------------------------------ create */

const platformInputSchema = z.strictObject({ enabled: z.boolean(), token: tokenSchema.optional() });

/** PROFILE §5 Create: nested objects may be partial; `null` is rejected. */
export const createAgentBodySchema = z
  .strictObject({
    name: nameSchema,
    bio: bioSchema.optional(),
    personality: agentConfigShape.personality.partial().optional(),
    knowledge: agentConfigShape.knowledge.partial().optional(),
    goals: agentConfigShape.goals.partial().optional(),
    platforms: z.strictObject(perPlatform(platformInputSchema.optional())).optional(),
    plugins: pluginsSchema.optional(),
    modelSettings: agentConfigShape.modelSettings.partial().optional(),
    status: clientStatusSchema.optional(),
  })
  .meta({ id: "CreateAgentBody" });
export type CreateAgentBody = z.infer<typeof createAgentBodySchema>;

/* ------------------------------------------------------------------ update */

/**
 * PROFILE §5 Update: RFC 7396 merge patch. `null` resets to the default or removes an optional
 * field; `null` for `name`, `status` or a platform's `enabled` is rejected. Whether a platform
 * that first appears carries `enabled` depends on the stored record, so the server checks it
 * while merging (see PLATFORM_NEEDS_ENABLED).
 */
const platformPatchSchema = z.strictObject({ enabled: z.boolean().optional(), token: tokenSchema.nullable().optional() });
const nullableListPatch = <T extends z.ZodType>(s: T) => s.nullable().optional();

export const updateAgentBodySchema = z
  .strictObject({
    name: nameSchema.optional(),
    bio: bioSchema.nullable().optional(),
    personality: z
      .strictObject({ traits: nullableListPatch(list(F.trait)) })
      .nullable()
      .optional(),
    knowledge: z
      .strictObject({
        expertise: nullableListPatch(list(F.expertise)),
        knowledgeBases: nullableListPatch(list(F.knowledgeBase)),
      })
      .nullable()
      .optional(),
    goals: z
      .strictObject({ objectives: nullableListPatch(list(F.objective)), motivations: nullableListPatch(list(F.motivation)) })
      .nullable()
      .optional(),
    platforms: z.strictObject(perPlatform(platformPatchSchema.nullable().optional())).nullable().optional(),
    plugins: pluginsSchema.nullable().optional(),
    modelSettings: z
      .strictObject({
        provider: bounded(F.provider).nullable().optional(),
        model: bounded(F.model).nullable().optional(),
        temperature: temperatureSchema.nullable().optional(),
        maxTokens: maxTokensSchema.nullable().optional(),
      })
      .nullable()
      .optional(),
    status: clientStatusSchema.optional(),
  })
  .meta({ id: "UpdateAgentBody" });
export type UpdateAgentBody = z.infer<typeof updateAgentBodySchema>;

/** The `details[].issue` for a platform that first appears without `enabled` (PROFILE §5). */
export const PLATFORM_NEEDS_ENABLED = "is required when the platform first appears";

/* -------------------------------------------------------------------- list */

/** A raw query value as an HTTP parser gives it: repeated parameters arrive as arrays. */
type RawQueryValue = string | string[] | undefined;

const singleValue = z.string({
  error: (issue) => (Array.isArray(issue.input) ? "must be given once" : "must be a string"),
});

const integerParam = (min: number, max: number, fallback: number) =>
  singleValue
    .regex(LIST_LIMITS.integerPattern, "must be an integer")
    .transform(Number)
    .pipe(z.number().min(min, `must be >= ${min}`).max(max, `must be <= ${max}`))
    .optional()
    .transform((v) => v ?? fallback);

const enumParam = <T extends readonly [string, ...string[]]>(values: T) =>
  singleValue.pipe(z.enum(values, { error: `must be one of ${values.join(", ")}` }));

/** PROFILE §5 List: parsed from the raw query. No clamping; unknown parameters ignored. */
export const listQuerySchema = z.object({
  page: integerParam(LIST_LIMITS.page.min, LIST_LIMITS.maxInteger, LIST_LIMITS.page.default),
  limit: integerParam(LIST_LIMITS.limit.min, LIST_LIMITS.limit.max, LIST_LIMITS.limit.default),
  status: enumParam(AGENT_STATUSES).optional(),
  sortBy: enumParam(SORT_FIELDS).default("createdAt"),
  order: enumParam(SORT_ORDERS).default("desc"),
});
export type ListQuery = z.output<typeof listQuerySchema>;
export type RawListQuery = Record<string, RawQueryValue>;

export const paginationSchema = z.strictObject({
  page: z.number().int().min(1),
  limit: z.number().int().min(1).max(LIST_LIMITS.limit.max),
  total: z.number().int().min(0),
  totalPages: z.number().int().min(0),
  hasMore: z.boolean(),
});
export type Pagination = z.infer<typeof paginationSchema>;

/** PROFILE §2: totalPages = ceil(total / limit) (0 when total is 0); hasMore = page < totalPages. */
export function paginationFor(page: number, limit: number, total: number): Pagination {
  const totalPages = Math.ceil(total / limit);
  return { page, limit, total, totalPages, hasMore: page < totalPages };
}

export const listEnvelopeSchema = z
  .strictObject({ success: z.literal(true), data: z.array(agentSchema), pagination: paginationSchema })
  .superRefine((env, ctx) => {
    const expected = paginationFor(env.pagination.page, env.pagination.limit, env.pagination.total);
    if (env.pagination.totalPages !== expected.totalPages)
      ctx.addIssue({ code: "custom", path: ["pagination", "totalPages"], message: "must be ceil(total / limit)" });
    if (env.pagination.hasMore !== expected.hasMore)
      ctx.addIssue({ code: "custom", path: ["pagination", "hasMore"], message: "must be page < totalPages" });
    if (env.data.length > env.pagination.limit)
      ctx.addIssue({ code: "custom", path: ["data"], message: "holds more items than limit" });
  })
  .meta({ id: "ListEnvelope" });

/* ------------------------------------------------------------------ envelopes */

export const successEnvelope = <T extends z.ZodType>(data: T) => z.strictObject({ success: z.literal(true), data });

export const agentEnvelopeSchema = successEnvelope(agentSchema).meta({ id: "AgentEnvelope" });
export const deleteResultSchema = z.strictObject({ id: agentIdSchema, deleted: z.literal(true) });
export const deleteEnvelopeSchema = successEnvelope(deleteResultSchema).meta({ id: "DeleteEnvelope" });
export const healthSchema = z.strictObject({ status: z.literal("ok") });

/* ---------------------------------------------------------------- messages */

export const messageBodySchema = z
  .strictObject({
    text: cpString(M.text.min, M.text.max, { notBlank: true }),
    userId: cpString(M.userId.min, M.userId.max).optional(),
    roomId: cpString(M.roomId.min, M.roomId.max).optional(),
    context: z
      .record(z.string(), z.unknown())
      .refine(
        (ctx) => Buffer.byteLength(JSON.stringify(ctx), "utf8") <= M.contextJsonBytes,
        `JSON must be at most ${M.contextJsonBytes} bytes`,
      )
      // JSON Schema has no keyword for a serialised size: the document says it in words and in an extension
      .meta({
        description: `Any JSON object; serialised, at most ${M.contextJsonBytes} bytes of UTF-8`,
        "x-max-json-bytes": M.contextJsonBytes,
      })
      .optional(),
    stream: z.boolean().optional(),
  })
  .meta({ id: "MessageBody" });
export type MessageBody = z.infer<typeof messageBodySchema>;

export const MESSAGE_ID_PATTERN = /^msg_[A-Za-z0-9_-]+$/;

export const messageReplySchema = z
  .strictObject({
    id: z.string().regex(MESSAGE_ID_PATTERN),
    agentId: agentIdSchema,
    conversationId: z.string().min(1),
    turn: z.number().int().min(1),
    userId: z.string().nullable(),
    roomId: z.string().nullable(),
    text: z.string(),
    createdAt: timestampSchema,
  })
  .meta({ id: "MessageReply" });
export type MessageReply = z.infer<typeof messageReplySchema>;
export const messageEnvelopeSchema = successEnvelope(messageReplySchema).meta({ id: "MessageEnvelope" });

/** PROFILE §5 stream events. */
export const SSE_EVENTS = {
  delta: z.strictObject({ text: z.string() }),
  done: messageReplySchema,
  error: z.strictObject({ code: errorCodeSchema, message: z.string() }),
} as const;
export type SseEventName = keyof typeof SSE_EVENTS;
export const SSE_CONTENT_TYPE = "text/event-stream";
