import { renameIdField } from "../client/id-field.js";
import { type ClauseId, isRecord } from "../contract/index.js";
import { defineCheck, isStream } from "./define.js";

/** The member `key` of a JSON value (an array index or an object key); undefined when it has none. */
const childAt = (v: unknown, key: PropertyKey): unknown =>
  Array.isArray(v) ? (typeof key === "number" ? v[key] : undefined) : isRecord(v) && typeof key === "string" ? v[key] : undefined;

/**
 * PROFILE §2, §4, §5: a success answer of an endpoint has the endpoint's shape (the agent record,
 * the list page, the delete confirmation, the message reply). One finding per broken rule, so a
 * record with an extra field is reported once, not by every test that read a record.
 */
export default defineCheck({
  id: "success-schema",
  clause: "record.shape",
  applies: (ex, ctx) =>
    ctx.endpoint !== undefined &&
    ex.response.status === ctx.endpoint.successStatus &&
    ex.response.json !== undefined &&
    !isStream(ex),
  run: (ex, ctx) => {
    const spec = ctx.endpoint!;
    const json = spec.id === "sendMessage" ? ex.response.json : renameIdField(ex.response.json, ctx.idField ?? "id");
    const parsed = spec.response.safeParse(json);
    if (parsed.success) return [];
    // a token member is the token checks' finding (PROFILE §4 token-write-only), not a second one here
    const issues = parsed.error.issues.filter(
      (i) => !(i.code === "unrecognized_keys" && i.keys.every((k) => k === "token") && i.path.includes("platforms")),
    );
    const problems = issues.map((issue) => {
      // a record in a list page breaks the rule a single record breaks: one path for both
      const path = issue.path
        .map((p) => (typeof p === "number" ? "[]" : String(p)))
        .join(".")
        .replace(/\.\[\]/g, "[]")
        .replace(/^data\[\]/, "data");
      const timestamp = /(^|\.)(createdAt|updatedAt)$/.test(path);
      const clause: ClauseId = path.startsWith("pagination")
        ? "envelope.list"
        : timestamp
          ? "record.timestamps"
          : spec.responseClause;
      const at = issue.path.reduce<unknown>(childAt, json);
      return {
        clause,
        // one rule for both timestamps: a wrong format is one defect, whichever field shows it first
        expected: timestamp ? "createdAt/updatedAt in RFC 3339 UTC with milliseconds" : `${path || "the body"}: ${issue.message}`,
        received:
          issue.code === "unrecognized_keys"
            ? issue.keys.map((k) => `${k}: ${JSON.stringify(childAt(at, k))?.slice(0, 60)}`).join(", ")
            : path.startsWith("pagination.")
              ? `${JSON.stringify(at)} in ${JSON.stringify(childAt(json, "pagination"))}`
              : at === undefined
                ? "absent"
                : JSON.stringify(at).slice(0, 120),
      };
    });
    // one problem per rule broken
    return [...new Map(problems.map((p) => [`${p.clause}|${p.expected}`, p])).values()].slice(0, 3);
  },
});
