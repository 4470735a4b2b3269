import { detailsFromIssues, errorEnvelopeSchema, HEALTH_PATH, isRecord } from "../contract/index.js";
import { defineCheck, isStream } from "./define.js";

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

/** PROFILE §2: success and error envelopes (the typed client checks each endpoint's data shape). */
export default defineCheck({
  id: "envelope",
  masksAnswer: true,
  clause: "envelope.error",
  // GET /health (PROFILE §1 Reference) sits outside /v1 and its envelopes
  applies: (ex) => !isStream(ex) && new URL(ex.request.url).pathname !== HEALTH_PATH,
  run: (ex) => {
    const { status, json, bodyText } = ex.response;
    if (json === undefined)
      return [{ expected: "a JSON body", received: bodyText ? `non-JSON: ${bodyText.slice(0, 120)}` : "an empty body" }];
    if (status >= 400) {
      const parsed = errorEnvelopeSchema.safeParse(json);
      return parsed.success
        ? []
        : parsed.error.issues.flatMap((issue) =>
            // a wrong type reads as the shape wanted ("error must be an object"), not as zod's sentence
            (issue.code === "invalid_type"
              ? [{ field: issue.path.join(".") || "(body)", issue: `must be ${article(issue.expected)}` }]
              : detailsFromIssues([issue])
            ).map((d) => ({ expected: `error envelope: ${d.field} ${d.issue}`, received: JSON.stringify(json).slice(0, 200) })),
          );
    }
    const ok = isRecord(json) && json.success === true && "data" in json;
    return ok ? [] : [{ expected: '{"success": true, "data": …}', received: JSON.stringify(json).slice(0, 200) }];
  },
});
