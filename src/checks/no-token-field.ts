import { defineCheck } from "./define.js";

/** PROFILE §4: platform tokens are write-only: no `token` member anywhere in a response body. */
export default defineCheck({
  id: "no-token-field",
  clause: "record.token-write-only",
  applies: (ex) => ex.response.json !== undefined || /"token"\s*:/.test(ex.response.bodyText),
  run: (ex) =>
    /"token"\s*:/.test(ex.response.bodyText) ? [{ expected: "no token member in any response", received: "a token member" }] : [],
});
