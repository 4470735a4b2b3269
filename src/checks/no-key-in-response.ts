import { literalsOf } from "../client/literals.js";
import { defineCheck, responseText } from "./define.js";

/**
 * PROFILE §6: keys never appear in any response. The client redacts a key it finds in an answer
 * and says where (`leaks`), so a recorded exchange never holds one; a raw scan covers observers
 * that do not redact.
 */
export default defineCheck({
  id: "no-key-in-response",
  clause: "auth.no-key-echo",
  applies: () => true,
  run: (ex, ctx) => {
    const text = responseText(ex);
    const places = [...(ex.leaks ?? []), ...(literalsOf(ctx.keys).foundIn(text) ? ["the recorded answer"] : [])];
    return places.map((where) => ({ expected: "no API key in any response", received: `a key in ${where} (redacted)` }));
  },
});
