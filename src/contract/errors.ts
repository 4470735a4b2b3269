import { z } from "zod";

/** PROFILE §3: the only conformant pairings of HTTP status and error code. */
export const STATUS_CODES = {
  400: ["INVALID_REQUEST"],
  401: ["UNAUTHORIZED"],
  403: ["FORBIDDEN"],
  404: ["AGENT_NOT_FOUND", "NOT_FOUND"],
  405: ["METHOD_NOT_ALLOWED"],
  413: ["PAYLOAD_TOO_LARGE"],
  415: ["UNSUPPORTED_MEDIA_TYPE"],
  429: ["RATE_LIMIT_EXCEEDED", "INSUFFICIENT_QUOTA"],
  500: ["MODEL_ERROR", "INTERNAL_ERROR"],
  503: ["AGENT_UNAVAILABLE", "SERVICE_UNAVAILABLE"],
} as const;

export type ErrorStatus = keyof typeof STATUS_CODES;
export type ErrorCode = (typeof STATUS_CODES)[ErrorStatus][number];

export const ERROR_CODES: readonly ErrorCode[] = Object.values(STATUS_CODES).flat();

/** The status each code is answered with (each code has exactly one). */
export const STATUS_OF_CODE = Object.fromEntries(
  Object.entries(STATUS_CODES).flatMap(([status, codes]) => codes.map((code) => [code, Number(status)])),
) as Record<ErrorCode, ErrorStatus>; // cast: Object.fromEntries forgets the keys; every code is a row of STATUS_CODES

export const errorCodeSchema = z.enum(ERROR_CODES);

/**
 * PROFILE §2: `details` is an array of objects whose `field` names the body field (dotted path) or
 * query parameter at fault. Its example's `issue` is not required by the text: the reference
 * writes one; a service that says it otherwise (or not at all) conforms.
 */
export const errorDetailSchema = z.object({ field: z.string(), issue: z.string().optional() });

export const errorEnvelopeSchema = z
  .object({
    success: z.literal(false),
    error: z.object({
      code: errorCodeSchema,
      message: z.string(),
      details: z.array(errorDetailSchema).optional(),
    }),
  })
  .meta({ id: "ErrorEnvelope" });

export type ErrorDetail = z.infer<typeof errorDetailSchema>;
export type ErrorEnvelope = z.infer<typeof errorEnvelopeSchema>;

/** Is this status/code pair one PROFILE §3 allows? */
export function isConformantPair(status: number, code: string): boolean {
  return codesOfStatus(status)?.some((c) => c === code) ?? false;
}

/** The codes PROFILE §3 pairs with `status`; undefined for a status outside the table. */
export function codesOfStatus(status: number): readonly ErrorCode[] | undefined {
  const table: Readonly<Record<number, readonly ErrorCode[]>> = STATUS_CODES;
  return table[status];
}

/**
 * PROFILE §2: turn zod issues into `details`, one per field at fault. An unknown key names
 * the key itself (`modelSettings.foo`), so a client can tell which key was refused.
 */
export function detailsFromIssues(issues: readonly z.core.$ZodIssue[]): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const issue of issues) {
    const base = issue.path.map(String);
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) details.push({ field: [...base, key].join("."), issue: "is not allowed" });
    } else {
      details.push({ field: base.join(".") || "(body)", issue: issue.message });
    }
  }
  return details;
}

/**
 * Does a details[].field name the fault at `field`? The field itself, an item inside it, or the
 * object holding it (PROFILE §2: an item's fault may be named at the item or its list).
 */
export function namesField(named: readonly string[], field: string): boolean {
  return named.some((n) => n === field || n.startsWith(`${field}.`) || (n !== "" && n !== "(body)" && field.startsWith(`${n}.`)));
}
