import fc from "fast-check";
import type { z } from "zod";
import {
  type ClauseId,
  type CreateAgentBody,
  createAgentBodySchema,
  FIELD_LIMITS as F,
  FIELD_NAMED_BY,
  isRecord,
  MOCK_MODELS,
  PLATFORMS,
  perPlatform,
  READ_ONLY_FIELDS,
  type UpdateAgentBody,
} from "../contract/index.js";
import { fromJsonSchema } from "./json-schema.js";
import { blankString, codePointString, exactCodePoints } from "./strings.js";

/** A generated case of a property: what was generated, and which generator made it (the report counts them). */
export interface Generated<T> {
  generator: string;
  value: T;
}

/** An invalid input, one fault at a time, knowing the field it breaks (PROFILE §2 details[].field). */
export interface InvalidInput {
  generator: string;
  /** a JSON object body, or raw text for a body that is not a JSON object */
  body: Record<string, unknown> | { raw: string };
  /** the dotted field the fault is in; undefined when the whole body is at fault */
  field: string | undefined;
  /**
   * PROFILE asks the 400 to name `field` (FIELD_NAMED_BY: an unknown or read-only key); any other
   * rejection may leave details out, and names no other field when it gives them
   */
  mustName: boolean;
}

export interface BodyOptions {
  /** every agent of a run is named with the run prefix (cleanup finds them by it) */
  namePrefix: string;
  /** the target honours the §10 mock models: `mock-error` may be chosen */
  referenceModels: boolean;
}

/** PROFILE §10: models that answer slowly or never would spend the budget, not find bugs. */
const SLOW_MODELS = new Set<string>([MOCK_MODELS.slow, MOCK_MODELS.timeout]);
export const FAILING_MODEL = MOCK_MODELS.error;

const cp = (s: string) => [...s].length;
const list = (limit: { min: number; max: number; maxItems: number }) =>
  fc.oneof(
    { withCrossShrink: true },
    { weight: 4, arbitrary: fc.array(codePointString(limit.min, limit.max), { maxLength: 4 }) },
    { weight: 1, arbitrary: fc.constant<string[]>([]) },
    {
      weight: 1,
      arbitrary: fc.array(codePointString(limit.min, limit.max), { minLength: limit.maxItems, maxLength: limit.maxItems }),
    },
    // duplicates are allowed in every list but plugins
    { weight: 1, arbitrary: codePointString(limit.min, limit.max).map((s) => [s, s]) },
  );

/**
 * Small pools beside the full space, so that generated values collide: two agents share a name
 * or a plugin, a name comes back after its agent is deleted. Where defects hide (an index keyed
 * by name, a registry keyed by plugin id), random data from the full space rarely goes.
 */
const NAME_POOL = ["a", "b", "A", "a ", "😀"] as const;
const PLUGIN_POOL = ["images", "blockchain", "web-search"] as const;

const pluginId = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom(...PLUGIN_POOL) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789"),
        fc.string({ unit: fc.constantFrom(..."abcxyz0189-"), maxLength: 63 }),
      )
      .map(([head, tail]) => head + tail),
  },
);
const plugins = fc.oneof(
  { withCrossShrink: true },
  { weight: 4, arbitrary: fc.uniqueArray(pluginId, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.uniqueArray(pluginId, { minLength: F.plugin.maxItems, maxLength: F.plugin.maxItems }) },
);

const temperature = fc.oneof(
  fc.constantFrom(F.temperature.min, F.temperature.max, 1),
  fc.double({ min: F.temperature.min, max: F.temperature.max, noNaN: true }).filter((n) => !Object.is(n, -0)),
);
const maxTokens = fc.oneof(
  fc.constantFrom(F.maxTokens.min, F.maxTokens.max),
  fc.integer({ min: F.maxTokens.min, max: F.maxTokens.max }),
);
const token = fc.string({ unit: fc.constantFrom(..."abcdef0123456789"), minLength: 12, maxLength: 24 }).map((s) => `tok-${s}`);

const modelName = (opts: BodyOptions) =>
  fc
    .oneof(
      { weight: 4, arbitrary: fc.constantFrom("mock-1", "mock-2", "gpt-x") },
      { weight: 2, arbitrary: codePointString(F.model.min, F.model.max) },
      { weight: opts.referenceModels ? 1 : 0, arbitrary: fc.constant(FAILING_MODEL) },
    )
    .filter((m) => !SLOW_MODELS.has(m) && (opts.referenceModels || m !== FAILING_MODEL));

export function agentName(opts: BodyOptions): fc.Arbitrary<string> {
  // the prefix is not blank, so the whole name is not blank whatever follows
  return fc
    .oneof(
      { weight: 2, arbitrary: fc.constantFrom(...NAME_POOL) },
      { weight: 3, arbitrary: codePointString(1, F.name.max - cp(opts.namePrefix)) },
    )
    .map((s) => opts.namePrefix + s);
}

/** PROFILE §5 Create: every configurable field optional (name aside), nested objects partial. */
function handMadeCreate(opts: BodyOptions): fc.Arbitrary<CreateAgentBody> {
  const platform = fc.record({ enabled: fc.boolean(), token }, { requiredKeys: ["enabled"] });
  return fc.record(
    {
      name: agentName(opts),
      bio: codePointString(F.bio.min, F.bio.max),
      personality: fc.record({ traits: list(F.trait) }, { requiredKeys: [] }),
      knowledge: fc.record({ expertise: list(F.expertise), knowledgeBases: list(F.knowledgeBase) }, { requiredKeys: [] }),
      goals: fc.record({ objectives: list(F.objective), motivations: list(F.motivation) }, { requiredKeys: [] }),
      platforms: fc.record(perPlatform(platform), {
        requiredKeys: [],
      }),
      plugins,
      modelSettings: fc.record(
        { provider: codePointString(F.provider.min, F.provider.max), model: modelName(opts), temperature, maxTokens },
        { requiredKeys: [] },
      ),
      status: fc.constantFrom("active", "inactive"),
    },
    { requiredKeys: ["name"] },
  );
}

/** A valid create body: json-schema-faker on the contract's JSON Schema, or the edge-seeking arbitrary. */
export function validCreateBody(opts: BodyOptions): fc.Arbitrary<Generated<CreateAgentBody>> {
  const faked = fromJsonSchema(createAgentBodySchema, (raw, seed) => {
    if (!isRecord(raw)) return undefined;
    const body = { ...raw };
    // faked tokens are words that show up in any text: make each one unmistakable for the leak check
    for (const [name, platform] of Object.entries(isRecord(body.platforms) ? body.platforms : {}))
      if (isRecord(platform) && platform.token !== undefined) platform.token = `tok-${seed.toString(16)}-${name}`;
    body.name = opts.namePrefix + [...String(body.name ?? "")].slice(0, F.name.max - cp(opts.namePrefix)).join("");
    const model = isRecord(body.modelSettings) ? body.modelSettings.model : undefined;
    if (typeof model === "string" && (SLOW_MODELS.has(model) || model === FAILING_MODEL)) return undefined;
    // the body as rewritten, not parsed.data, which would send its keys in schema order
    const rewritten: unknown = body;
    return admitsAsCreateBody(rewritten) ? rewritten : undefined;
  });
  return fc.oneof(
    { weight: 2, arbitrary: handMadeCreate(opts).map((value) => ({ generator: "create.edges", value })) },
    { weight: 1, arbitrary: faked.map((value) => ({ generator: "create.json-schema-faker", value })) },
  );
}

/** PROFILE §5 Update: a merge patch with `null` at every level where `null` is allowed. */
export function validPatch(opts: BodyOptions): fc.Arbitrary<Generated<UpdateAgentBody>> {
  const orNull = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null, freq: 4 });
  const platformPatch = orNull(fc.record({ enabled: fc.boolean(), token: orNull(token) }, { requiredKeys: [] }));
  const patch = fc.record(
    {
      name: agentName(opts),
      bio: orNull(codePointString(F.bio.min, F.bio.max)),
      personality: orNull(fc.record({ traits: orNull(list(F.trait)) }, { requiredKeys: [] })),
      knowledge: orNull(
        fc.record({ expertise: orNull(list(F.expertise)), knowledgeBases: orNull(list(F.knowledgeBase)) }, { requiredKeys: [] }),
      ),
      goals: orNull(
        fc.record({ objectives: orNull(list(F.objective)), motivations: orNull(list(F.motivation)) }, { requiredKeys: [] }),
      ),
      platforms: orNull(
        fc.record(perPlatform(platformPatch), {
          requiredKeys: [],
        }),
      ),
      plugins: orNull(plugins),
      modelSettings: orNull(
        fc.record(
          {
            provider: orNull(codePointString(F.provider.min, F.provider.max)),
            model: orNull(modelName(opts)),
            temperature: orNull(temperature),
            maxTokens: orNull(maxTokens),
          },
          { requiredKeys: [] },
        ),
      ),
      status: fc.constantFrom("active", "inactive"),
    },
    { requiredKeys: [] },
  );
  return fc.oneof(
    { weight: 6, arbitrary: patch.map((value) => ({ generator: "patch.merge", value })) },
    { weight: 1, arbitrary: fc.constant({ generator: "patch.empty", value: {} }) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom("active", "inactive")
        .map((status): Generated<UpdateAgentBody> => ({ generator: "patch.status", value: { status } })),
    },
  );
}

/* ---------------------------------------------------------------- invalid */

type Obj = Record<string, unknown>;
/** A body the Create schema admits as it is (it has no transform, so what it admits is what it reads). */
const admitsAsCreateBody = (v: unknown): v is z.input<typeof createAgentBodySchema> => createAgentBodySchema.safeParse(v).success;
/** Where a fault may be put: the top of the body, or inside one of its objects. */
const NESTED = ["personality", "knowledge", "goals", "modelSettings"] as const;

const unknownKey = fc.constantFrom("extra", "Name", "nickname", "__proto_", "settings", "trait");

/** A fault in one field: the value that breaks it, at the path it breaks. */
interface Fault {
  generator: string;
  path: readonly string[];
  value: unknown;
  /** the clause the fault breaks, where PROFILE asks its rejection to name the field */
  clause?: ClauseId;
}

/** Values one past each bound, and other out-of-range values, field by field (PROFILE §4). */
function boundFaults(): fc.Arbitrary<Fault> {
  const over = (limit: { max: number }) => exactCodePoints(limit.max + 1, { loneSurrogates: true });
  const overList = (limit: { min: number; max: number; maxItems: number }) =>
    fc.array(codePointString(limit.min, Math.min(limit.max, 8)), {
      minLength: limit.maxItems + 1,
      maxLength: limit.maxItems + 1,
    });
  const f = (generator: string, path: readonly string[], value: fc.Arbitrary<unknown>) =>
    value.map((v) => ({ generator, path, value: v }));
  return fc.oneof(
    f("bound.name-too-long", ["name"], over(F.name)),
    f("bound.bio-too-long", ["bio"], over(F.bio)),
    f(
      "bound.trait-too-long",
      ["personality", "traits"],
      over(F.trait).map((s) => [s]),
    ),
    f("bound.trait-empty", ["personality", "traits"], fc.constant([""])),
    f("bound.traits-too-many", ["personality", "traits"], overList(F.trait)),
    f("bound.expertise-too-many", ["knowledge", "expertise"], overList(F.expertise)),
    f(
      "bound.knowledge-base-too-long",
      ["knowledge", "knowledgeBases"],
      over(F.knowledgeBase).map((s) => [s]),
    ),
    f(
      "bound.objective-too-long",
      ["goals", "objectives"],
      over(F.objective).map((s) => [s]),
    ),
    f("bound.motivations-too-many", ["goals", "motivations"], overList(F.motivation)),
    f(
      "bound.plugins-too-many",
      ["plugins"],
      fc.uniqueArray(pluginId, { minLength: F.plugin.maxItems + 1, maxLength: F.plugin.maxItems + 1 }),
    ),
    f(
      "bound.plugin-pattern",
      ["plugins"],
      fc.constantFrom("Images", "-x", "a_b", "", "é", "a".repeat(65)).map((p) => [p]),
    ),
    f(
      "bound.plugins-duplicate",
      ["plugins"],
      pluginId.map((p) => [p, p]),
    ),
    f("bound.provider-empty", ["modelSettings", "provider"], fc.constant("")),
    f("bound.provider-too-long", ["modelSettings", "provider"], over(F.provider)),
    f("bound.model-too-long", ["modelSettings", "model"], over(F.model)),
    f("bound.temperature", ["modelSettings", "temperature"], fc.constantFrom(-0.0001, 2.0001, 3, -1)),
    f("bound.max-tokens", ["modelSettings", "maxTokens"], fc.constantFrom(0, 32769, 1.5, -1)),
  );
}

function wrongTypeFaults(): fc.Arbitrary<Fault> {
  const notString = fc.constantFrom<unknown>(42, true, [1], { a: 1 });
  const notObject = fc.constantFrom<unknown>(42, true, "text", [1]);
  const notList = fc.constantFrom<unknown>(42, true, "text", { a: 1 });
  const f = (path: readonly string[], value: fc.Arbitrary<unknown>) =>
    value.map((v) => ({ generator: "type.wrong", path, value: v }));
  return fc.oneof(
    f(["name"], notString),
    f(["bio"], notString),
    f(["personality"], notObject),
    f(["goals"], notObject),
    f(["platforms"], notObject),
    f(["personality", "traits"], notList),
    f(["knowledge", "expertise"], notList),
    f(["plugins"], notList),
    f(["modelSettings", "model"], notString),
    f(["modelSettings", "temperature"], fc.constantFrom<unknown>("1", true, [1])),
    f(["platforms", "discord", "enabled"], fc.constantFrom<unknown>("yes", 1, "true")),
    f(["status"], fc.constantFrom<unknown>(1, true, "Active", "deleted")),
  );
}

function setAt(body: Obj, path: readonly string[], value: unknown): Obj {
  const out: Obj = structuredClone(body);
  let at: Obj = out;
  for (const key of path.slice(0, -1)) {
    const next = at[key];
    at = at[key] = isRecord(next) ? { ...next } : {};
  }
  at[path.at(-1)!] = value;
  return out;
}

/** An unknown key (twice as often) or a read-only field: the faults PROFILE asks the 400 to name (§4). */
function keyFaults(): fc.Arbitrary<Fault> {
  return fc.oneof(
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom<string[]>([], ...NESTED.map((n) => [n]), ["platforms"], ["platforms", "telegram"]), unknownKey)
        .map(([at, key]) => ({
          generator: "key.unknown",
          // PROFILE §4 names the objects with a fixed set of keys (the body, personality, knowledge,
          // goals, modelSettings, a platform): `platforms` itself is not among them, so a platform
          // outside the three is refused (§4's type) without naming it being asked
          ...(at.length === 1 && at[0] === "platforms" ? {} : { clause: "record.unknown-keys" as const }),
          path: [...at, key],
          value: at[0] === "platforms" && at.length === 1 ? { enabled: true } : "x",
        })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(...READ_ONLY_FIELDS.filter((f) => f !== "tokenSet")).map((f) => ({
        generator: "key.read-only",
        clause: "record.read-only-fields" as const,
        path: [f],
        value: f === "id" ? "agt_1" : "2026-01-01T00:00:00.000Z",
      })),
    },
    {
      weight: 1,
      arbitrary: fc.constant({
        generator: "key.read-only",
        clause: "record.read-only-fields" as const,
        path: ["platforms", "discord", "tokenSet"],
        value: true,
      }),
    },
  );
}

/**
 * A create or update body broken in exactly one way. `base` is a valid body to break; the
 * result names the field at fault. `kind` picks the faults that apply to the endpoint.
 */
export function invalidBody(kind: "create" | "update", base: fc.Arbitrary<Obj>): fc.Arbitrary<InvalidInput> {
  const fieldFault: fc.Arbitrary<Fault> = fc.oneof(
    { weight: 4, arbitrary: boundFaults() },
    { weight: 2, arbitrary: wrongTypeFaults() },
    { weight: 4, arbitrary: keyFaults() },
    { weight: 1, arbitrary: fc.constant({ generator: "status.error", path: ["status"], value: "error" }) },
    { weight: 1, arbitrary: blankString(F.name.max).map((value) => ({ generator: "name.blank", path: ["name"], value })) },
    {
      weight: 2,
      arbitrary: (kind === "create"
        ? fc.constantFrom(
            ["name"],
            ["bio"],
            ["personality"],
            ["modelSettings", "model"],
            ["plugins"],
            ["status"],
            ["platforms", "discord"],
          )
        : fc.constantFrom(["name"], ["status"], ["platforms", "discord", "enabled"])
      ).map((path) => ({ generator: "null.forbidden", path, value: null })),
    },
  );
  const broken = fc.tuple(base, fieldFault).map(([body, fault]): InvalidInput => {
    // inside a platform, the platform itself is valid (it has `enabled`): only the one fault remains
    const prepared =
      fault.path[0] === "platforms" && fault.path.length === 3 && fault.path[2] !== "enabled"
        ? setAt(body, fault.path.slice(0, 2), { enabled: true })
        : body;
    return {
      generator: fault.generator,
      body: setAt(prepared, fault.path, fault.value),
      field: fault.path.join("."),
      mustName: fault.clause !== undefined && FIELD_NAMED_BY.has(fault.clause),
    };
  });
  const notAnObject = fc
    .constantFrom("[]", '"agent"', "42", "null", "true", '[{"name":"x"}]', "{", '{"name": "x",}')
    .map((raw): InvalidInput => ({ generator: "body.not-an-object", body: { raw }, field: undefined, mustName: false }));
  const variants: fc.WeightedArbitrary<InvalidInput>[] = [
    { weight: 12, arbitrary: broken },
    { weight: 1, arbitrary: notAnObject },
  ];
  // PROFILE §5 Create: a platform needs `enabled` when it first appears (in an update, the model decides)
  if (kind === "create")
    variants.push({
      weight: 1,
      arbitrary: fc.tuple(base, fc.constantFrom(...PLATFORMS), token).map(
        ([body, p, t]): InvalidInput => ({
          generator: "platform.no-enabled",
          body: setAt(body, ["platforms", p], { token: t }),
          field: `platforms.${p}.enabled`,
          mustName: false,
        }),
      ),
    });
  return fc.oneof(...variants);
}
