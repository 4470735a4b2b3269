import type { ObservedExchange } from "./define.js";
import { defineCheck } from "./define.js";

const responseText = (ex: ObservedExchange) => `${ex.response.bodyText}\n${Object.values(ex.response.headers).flat().join("\n")}`;

/**
 * PROFILE §6: keys never appear in any response. The client redacts a key it finds in an answer
 * and says where (`leaks`), so a recorded exchange never holds one; a raw scan covers observers
 * that do not redact.
 */
export const noKeyInResponse = defineCheck({
  id: "no-key-in-response",
  clause: "auth.no-key-echo",
  applies: () => true,
  run: (ex, ctx) => {
    const text = responseText(ex);
    const places = [...(ex.leaks ?? []), ...(ctx.keys.some((k) => text.includes(k)) ? ["the recorded answer"] : [])];
    return places.map((where) => ({ expected: "no API key in any response", received: `a key in ${where} (redacted)` }));
  },
});

/** PROFILE §4: a platform token the run sent never comes back, under any name. */
export const noTokenValue = defineCheck({
  id: "no-token-value",
  clause: "record.token-write-only",
  applies: (_ex, ctx) => ctx.tokens.length > 0,
  run: (ex, ctx) => {
    const text = responseText(ex);
    return ctx.tokens.some((t) => text.includes(t))
      ? [{ expected: "no platform token in any response", received: "a token the run sent" }]
      : [];
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
