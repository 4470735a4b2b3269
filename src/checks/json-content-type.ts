import { defineCheck, header, isStream } from "./define.js";

/** PROFILE §1: every JSON response says application/json (a charset parameter is allowed). */
export default defineCheck({
  id: "json-content-type",
  clause: "transport.json-content-type",
  applies: (ex) => ex.response.bodyText.length > 0 && !isStream(ex),
  run: (ex) => {
    const type = header(ex, "content-type") ?? "";
    return /^application\/json\s*(;.*)?$/i.test(type)
      ? []
      : [{ expected: "Content-Type: application/json", received: type ? `Content-Type: ${type}` : "no Content-Type" }];
  },
});
