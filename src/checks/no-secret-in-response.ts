import { defineCheck } from "./define.js";

/** PROFILE §6: keys never appear in any response. */
export const noKeyInResponse = defineCheck({
  id: "no-key-in-response",
  clause: "auth.no-key-echo",
  applies: (_ex, ctx) => ctx.secrets.length > 0,
  run: (ex, ctx) => {
    const text = `${ex.response.bodyText}\n${Object.values(ex.response.headers).flat().join("\n")}`;
    return ctx.secrets
      .filter((s) => text.includes(s))
      .map(() => ({ expected: "no key or token in the response", received: "a secret the harness sent (redacted)" }));
  },
});

/** PROFILE §4: platform tokens are write-only: no `token` member anywhere in a response body. */
export const noTokenField = defineCheck({
  id: "no-token-field",
  clause: "record.token-write-only",
  applies: (ex) => ex.response.json !== undefined || /"token"\s*:/.test(ex.response.bodyText),
  run: (ex) =>
    /"token"\s*:/.test(ex.response.bodyText) ? [{ expected: "no token member in any response", received: "a token member" }] : [],
});
