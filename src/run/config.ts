import { z } from "zod";
import { NETWORK_ENV, NETWORK_FLAGS, tlsOptionsOf } from "../client/network.js";
import { CLAUSE_BY_ID, SECTIONS } from "../contract/index.js";
import { parseDelay } from "../net/delay-proxy.js";
import { PROFILES } from "../plan/profiles.js";
import type { HarnessTarget } from "../target/harness-target.js";
import { FLAGGED_ROLES, type FlaggedRole, KEY_ROLES, type KeyRole } from "../target/key-roles.js";
import { EMBEDDED_DEFAULTS } from "../target/reference-plan.js";
import { STARTED_TARGETS } from "../target/types.js";

/**
 * What a run takes: each option with its flag, env var and help (one table drives the CLI's
 * parsing, env and help), and the schema that validates them together.
 */

export interface OptionSpec {
  flag: string;
  env: string;
  type: "string" | "boolean";
  help: string;
  multiple?: boolean;
  /**
   * A switch taken from its flag alone, with the reason: its variable is not read, and one set on
   * is a usage error rather than a switch silently left off.
   */
  flagOnly?: string;
}

/** A key role's option: its flag, env var and help come from the key-role table (src/target/key-roles.ts). */
const keyOption = (role: FlaggedRole) => {
  const { flag, env, help } = KEY_ROLES[role];
  return { flag, env, type: "string", help } as const;
};

/** `verify` options; each flag also reads an env var. One table drives parsing, env and help. */
export const VERIFY_OPTIONS = {
  target: {
    flag: "target",
    env: "AGENT_HARNESS_TARGET",
    type: "string",
    help: "embedded | container (default embedded; ignored with --base-url)",
  },
  baseUrl: {
    flag: "base-url",
    env: "AGENT_API_BASE_URL",
    type: "string",
    help: "verify a deployment at this base URL (ends with /v1)",
  },
  apiKey: { ...keyOption("main"), multiple: true },
  apiKeys: {
    flag: "api-keys",
    env: "AGENT_API_KEYS",
    type: "string",
    help: "comma-separated keys of the main account, all four permissions (as --api-key repeated)",
  },
  readOnlyKey: keyOption("readOnly"),
  otherAccountKey: keyOption("otherAccount"),
  quotaKey: keyOption("quota"),
  loadKey: keyOption("load"),
  loadTier: {
    flag: "load-tier",
    env: "AGENT_API_LOAD_TIER",
    type: "string",
    help: "the --load-key account's tier limit per window (the bursts need at least 3× an endpoint bucket)",
  },
  tierBurstKey: keyOption("tierBurst"),
  tierBurstTier: {
    flag: "tier-burst-tier",
    env: "AGENT_API_TIER_BURST_TIER",
    type: "string",
    help: "the --tier-burst-key account's tier limit per window (required with it)",
  },
  tier: {
    flag: "tier",
    env: "AGENT_API_TIER",
    type: "string",
    help: "the main account's tier limit per window: enables the tier check",
  },
  rateWindow: {
    flag: "rate-window",
    env: "AGENT_API_RATE_WINDOW",
    type: "string",
    help: "rate-limit window W in seconds (default 60; embedded 2)",
  },
  messageTimeout: {
    flag: "message-timeout",
    env: "AGENT_API_MESSAGE_TIMEOUT",
    type: "string",
    help: "Send Message time budget in seconds (default 30; embedded 4.5)",
  },
  referenceFaults: {
    flag: "reference-faults",
    env: "AGENT_API_REFERENCE_FAULTS",
    type: "boolean",
    help: "target is reference-compatible (PROFILE §10): run mock-model and quota checks (always on for embedded/container)",
  },
  idField: { flag: "id-field", env: "AGENT_API_ID_FIELD", type: "string", help: "name of the identifier field (default id)" },
  suites: {
    flag: "suites",
    env: "AGENT_HARNESS_SUITES",
    type: "string",
    help: "comma-separated suites: functional, property, load, quick-load (default: functional,property,quick-load; on --base-url functional,property)",
  },
  reportDir: {
    flag: "report-dir",
    env: "AGENT_HARNESS_REPORT_DIR",
    type: "string",
    help: "where reports/<run-id>/ go (default reports)",
  },
  seed: { flag: "seed", env: "AGENT_HARNESS_SEED", type: "string", help: "seed for random choices (default: random, printed)" },
  workers: {
    flag: "workers",
    env: "AGENT_HARNESS_WORKERS",
    type: "string",
    help: `parallel workers on a target the harness starts, each with its own accounts (default ${EMBEDDED_DEFAULTS.workers}; ignored with --base-url)`,
  },
  profile: {
    flag: "profile",
    env: "AGENT_HARNESS_PROFILE",
    type: "string",
    help: "full (default) | smoke: every endpoint's main success and error paths, minutes at W = 60",
  },
  bail: { flag: "bail", env: "AGENT_HARNESS_BAIL", type: "boolean", help: "stop at the first failed check" },
  sections: {
    flag: "sections",
    env: "AGENT_HARNESS_SECTIONS",
    type: "string",
    help: "run only checks citing these PROFILE sections or clauses, e.g. §5,§7 or 5,7 or §7,list.order",
  },
  replay: {
    flag: "replay",
    env: "AGENT_HARNESS_REPLAY",
    type: "string",
    help: "replay the shrunk case a property run wrote (reports/<run>/replay-*.json)",
  },
  maxRequests: {
    flag: "max-requests",
    env: "AGENT_HARNESS_MAX_REQUESTS",
    type: "string",
    help: "request budget of the property suite (default: 3 minutes of the tier; none on embedded)",
  },
  networkDelay: {
    flag: "network-delay",
    env: "AGENT_HARNESS_NETWORK_DELAY",
    type: "string",
    help: "put a TCP proxy in front of the target that delays each direction by MS±JITTER milliseconds (e.g. 40±20): a network between the harness and the service",
  },
  networkProxy: {
    flag: "network-proxy",
    env: "AGENT_HARNESS_NETWORK_PROXY",
    type: "string",
    help: "that proxy also acts as an intermediary: close-after-response (a load balancer without keep-alive), buffer-responses (holds a response until its end), or both comma-separated",
  },
  caFile: {
    flag: NETWORK_FLAGS.caFile,
    env: NETWORK_ENV.caFile,
    type: "string",
    help: "PEM file of the CA that signed the deployment's certificate (a TLS terminator with a company CA), trusted besides the system's CAs; HTTP_PROXY, HTTPS_PROXY and NO_PROXY are honoured as curl does",
  },
  clientCert: {
    flag: NETWORK_FLAGS.clientCert,
    env: NETWORK_ENV.clientCert,
    type: "string",
    help: "PEM client certificate for a deployment that demands one (mutual TLS); needs --client-key",
  },
  clientKey: {
    flag: NETWORK_FLAGS.clientKey,
    env: NETWORK_ENV.clientKey,
    type: "string",
    help: "PEM private key of --client-cert",
  },
  dryRun: {
    flag: "dry-run",
    env: "AGENT_HARNESS_DRY_RUN",
    type: "boolean",
    help: "check the keys with a few requests, then print what would run, what is skipped (and the flag that enables it) and the plan; run no check",
    // a dry run exits 0 having run no check: set for a whole CI job (the variable is cleanup's too),
    // it would turn every verify of the job into a green that judged nothing
    flagOnly:
      "a dry run runs no check and exits 0, so verify and load take it from --dry-run on the command line, where the job's log shows it (the variable is cleanup's)",
  },
  clockSkew: {
    flag: "clock-skew",
    env: "AGENT_HARNESS_CLOCK_SKEW",
    type: "string",
    help: "start the reference target with its clock S seconds ahead (negative: behind), e.g. 10 or -10",
  },
  fault: {
    flag: "fault",
    env: "AGENT_HARNESS_FAULT",
    type: "string",
    multiple: true,
    help: "start the reference target with this injected defect (repeatable)",
  },
} as const satisfies Record<string, OptionSpec>;

type OptionName = keyof typeof VERIFY_OPTIONS;
/** The option each key role is read into: every role of the table that has a flag. */
export const KEY_OPTIONS = {
  main: "apiKey",
  readOnly: "readOnlyKey",
  otherAccount: "otherAccountKey",
  quota: "quotaKey",
  load: "loadKey",
  tierBurst: "tierBurstKey",
} as const satisfies Record<FlaggedRole, OptionName>;
/** The options that give a key, in the table's order: each role's, and --api-keys beside the main one. */
const KEY_OPTION_NAMES = FLAGGED_ROLES.flatMap((role) =>
  role === "main" ? [KEY_OPTIONS.main, "apiKeys" as const] : [KEY_OPTIONS[role]],
);
/** A comma-separated option: items trimmed, empty ones dropped, then `normalize`d; at least one left. */
export const commaList = <T extends z.ZodType<unknown, string>>(item: T, normalize: (x: string) => string = (x) => x) =>
  z
    .string()
    .transform((s) =>
      s
        .split(",")
        .map((x) => x.trim())
        .filter(Boolean)
        .map(normalize),
    )
    .pipe(z.array(item).min(1));

const number = (label: string, opts: { integer?: boolean; min?: number } = {}) =>
  z
    .string()
    .trim()
    .regex(/^[0-9]+(\.[0-9]+)?$/, `${label} must be a number`)
    .transform(Number)
    .refine((n) => !opts.integer || Number.isInteger(n), `${label} must be a whole number`)
    .refine((n) => n >= (opts.min ?? 0), `${label} must be at least ${opts.min ?? 0}`);

/** What the delaying proxy of `--network-proxy` can also act as (src/net/delay-proxy.ts). */
const NETWORK_INTERMEDIARIES = ["close-after-response", "buffer-responses"] as const;

/** `quick-load`: the load scenarios that take seconds on short windows (a subset of `load`) */
export const SUITE_NAMES = ["functional", "property", "load", "quick-load"] as const;
/**
 * What verify runs without --suites: on a target the harness starts, the quick load
 * scenarios too; on a deployment, load runs only when asked (`--suites …,load` or `agent-harness
 * load`) — its owner decides when to put bursts on it.
 */
export const DEFAULT_SUITES: readonly SuiteName[] = ["functional", "property", "quick-load"];
export const DEFAULT_EXTERNAL_SUITES: readonly SuiteName[] = ["functional", "property"];
export type SuiteName = (typeof SUITE_NAMES)[number];

/**
 * A key as its flag gives it: an empty one (a CI secret a fork's run does not get) is refused
 * naming the flag, and so is one with a space or a control character in it (a secret saved with
 * its trailing newline), which no Authorization header can carry: undici would refuse every
 * request, and the run would call the target unreachable.
 */
/** A space or a control character: what no Authorization header's token can hold. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
const NOT_IN_A_KEY = /[\s\u0000-\u001f\u007f]/;
const keyText = (flag: string) =>
  z
    .string()
    .min(1, `--${flag} must not be empty`)
    .refine(
      (key) => !NOT_IN_A_KEY.test(key),
      `--${flag} holds a space or a control character (a trailing newline?): a key is one token`,
    );
const keyValue = (role: FlaggedRole) => keyText(KEY_ROLES[role].flag).optional();

/** `--id-field`: the record's identifier field (PROFILE §11), for every command that reads agents. */
export const idFieldSchema = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "--id-field must be a field name")
  .default("id");

export const verifySchema = z
  .object({
    target: z.enum(STARTED_TARGETS, { error: `--target must be ${STARTED_TARGETS.join(" or ")}` }).default("embedded"),
    baseUrl: z
      .url({ protocol: /^https?$/, error: "--base-url must be an http(s) URL" })
      // the harness sends API keys, never a URL's credentials; and the URL is printed and reported
      .refine((u) => {
        const { username, password } = new URL(u);
        return !username && !password;
      }, "--base-url must not carry a user or password: they would never be sent (the API takes keys: --api-key), and the URL is printed in every report")
      .transform((u) => u.replace(/\/+$/, ""))
      .optional(),
    apiKey: z.array(keyText(KEY_ROLES.main.flag)).optional(),
    apiKeys: z.string().optional(),
    readOnlyKey: keyValue("readOnly"),
    otherAccountKey: keyValue("otherAccount"),
    quotaKey: keyValue("quota"),
    tier: number("--tier", { integer: true, min: 1 }).optional(),
    loadKey: keyValue("load"),
    loadTier: number("--load-tier", { integer: true, min: 1 }).optional(),
    tierBurstKey: keyValue("tierBurst"),
    tierBurstTier: number("--tier-burst-tier", { integer: true, min: 1 }).optional(),
    rateWindow: number("--rate-window", { min: 0.5 }).optional(),
    messageTimeout: number("--message-timeout", { min: 0.5 }).optional(),
    referenceFaults: z.boolean().default(false),
    idField: idFieldSchema,
    suites: commaList(z.enum(SUITE_NAMES, { error: `--suites takes a list of: ${SUITE_NAMES.join(", ")}` })).optional(),
    reportDir: z.string().min(1).default("reports"),
    seed: number("--seed", { integer: true }).optional(),
    workers: number("--workers", { integer: true, min: 1 }).optional(),
    profile: z.enum(PROFILES, { error: `--profile must be one of: ${PROFILES.join(", ")}` }).default("full"),
    bail: z.boolean().default(false),
    sections: commaList(
      z.string().refine((x) => SECTIONS.includes(x) || CLAUSE_BY_ID.has(x), {
        error: (issue) =>
          `--sections takes PROFILE sections (${SECTIONS[0]} … ${SECTIONS.at(-1)}) or clause ids (e.g. list.order); ${String(issue.input)} is neither`,
      }),
      (x) => (/^[0-9]+$/.test(x) ? `§${x}` : x),
    ).optional(),
    replay: z.string().min(1).optional(),
    maxRequests: number("--max-requests", { integer: true, min: 1 }).optional(),
    fault: z.array(z.string().min(1)).default([]),
    dryRun: z.boolean().default(false),
    caFile: z.string().min(1).optional(),
    clientCert: z.string().min(1).optional(),
    clientKey: z.string().min(1).optional(),
    clockSkew: z
      .string()
      .trim()
      .regex(/^[+-]?[0-9]+(\.[0-9]+)?$/, "--clock-skew must be a number of seconds, e.g. 10 or -10")
      .transform(Number)
      .optional(),
    networkDelay: z
      .string()
      .transform((text, ctx) => {
        const delay = parseDelay(text);
        if (!delay)
          ctx.addIssue({ code: "custom", message: "--network-delay takes MS or MS±JITTER (jitter ≤ delay), e.g. 40±20" });
        return delay ?? { ms: 0, jitterMs: 0 };
      })
      .optional(),
    networkProxy: commaList(
      z.enum(NETWORK_INTERMEDIARIES, { error: `--network-proxy takes: ${NETWORK_INTERMEDIARIES.join(", ")}` }),
    ).optional(),
  })
  .superRefine((o, ctx) => {
    // $AGENT_API_KEYS of commas alone (a CI line joining secrets a fork's run does not get) gives no key
    const listed = (o.apiKeys ?? "").split(",").some((k) => k.trim() !== "");
    if (o.baseUrl && !o.apiKey?.length && !listed)
      ctx.addIssue({ code: "custom", message: "--base-url needs --api-key (or $AGENT_API_KEY)", path: ["apiKey"] });
    // keys without a base URL would verify the embedded server and pass: a CI secret is missing
    if (!o.baseUrl)
      for (const name of KEY_OPTION_NAMES)
        if (o[name]) {
          const { flag, env } = VERIFY_OPTIONS[name];
          ctx.addIssue({
            code: "custom",
            message: `--${flag} (or $${env}) is set but the base URL is missing: set --base-url or $AGENT_API_BASE_URL`,
            path: ["baseUrl"],
          });
          break;
        }
    // a tier the key's account does not have would judge the tier burst against the wrong number
    if (o.tierBurstKey && o.tierBurstTier === undefined)
      ctx.addIssue({
        code: "custom",
        message: "--tier-burst-key needs --tier-burst-tier (its account's tier per window)",
        path: ["tierBurstTier"],
      });
    if (o.loadTier !== undefined && !o.loadKey)
      ctx.addIssue({ code: "custom", message: "--load-tier needs --load-key (the key of that account)", path: ["loadKey"] });
    if (o.tierBurstTier !== undefined && !o.tierBurstKey)
      ctx.addIssue({
        code: "custom",
        message: "--tier-burst-tier needs --tier-burst-key (the key of that account)",
        path: ["tierBurstKey"],
      });
    // the PEM files are read now: a wrong path is a usage error, not a run that cannot connect
    const tls = tlsOptionsOf({ caFile: o.caFile, clientCert: o.clientCert, clientKey: o.clientKey });
    if (typeof tls === "string") ctx.addIssue({ code: "custom", message: tls, path: ["caFile"] });
    if (o.baseUrl && !/\/v1$/.test(o.baseUrl))
      ctx.addIssue({ code: "custom", message: "--base-url must end with /v1 (PROFILE §1)", path: ["baseUrl"] });
    if (o.baseUrl && o.fault.length)
      ctx.addIssue({ code: "custom", message: "--fault applies only to a reference target the harness starts", path: ["fault"] });
    if (o.baseUrl && o.clockSkew !== undefined)
      ctx.addIssue({
        code: "custom",
        message: "--clock-skew applies only to a reference target the harness starts",
        path: ["clockSkew"],
      });
  })
  .transform(({ apiKey, apiKeys, ...o }) => {
    // --api-key repeated and $AGENT_API_KEYS: keys of the main account; the first is the main key
    const mainKeys = [
      ...new Set([
        ...(apiKey ?? []),
        ...(apiKeys ?? "")
          .split(",")
          .map((k) => k.trim())
          .filter(Boolean),
      ]),
    ];
    return { ...o, ...(mainKeys.length ? { apiKey: mainKeys[0]!, mainKeys } : {}) };
  });

export type VerifyConfig = z.output<typeof verifySchema>;

/**
 * The keys a run's options give, by role (src/target/key-roles.ts): the main role's listed too
 * when several. A small-quota account's key is used only on a reference-compatible target
 * (PROFILE §10: the quota checks need one).
 */
export function givenKeys(config: VerifyConfig): HarnessTarget["keys"] {
  const keys: HarnessTarget["keys"] = { main: config.apiKey! };
  if (config.mainKeys && config.mainKeys.length > 1) keys.mainKeys = config.mainKeys;
  for (const role of FLAGGED_ROLES) {
    const key = config[KEY_OPTIONS[role]];
    const row: KeyRole = KEY_ROLES[role];
    if (role !== "main" && key && (config.referenceFaults || !row.smallQuota)) keys[role] = key;
  }
  return keys;
}
