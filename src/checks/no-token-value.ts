import { defineCheck, responseText } from "./define.js";

/** PROFILE §4: a platform token the run sent never comes back, under any name. */
export default defineCheck({
  id: "no-token-value",
  clause: "record.token-write-only",
  applies: (_ex, ctx) => ctx.tokens.size > 0,
  run: (ex, ctx) => {
    return ctx.tokens.foundIn(responseText(ex))
      ? [{ expected: "no platform token in any response", received: "a token the run sent" }]
      : [];
  },
});
