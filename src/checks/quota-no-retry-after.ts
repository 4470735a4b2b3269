import { HEADERS } from "../contract/index.js";
import { defineCheck, errorOf, header } from "./define.js";

/** PROFILE §7: a 429 INSUFFICIENT_QUOTA carries no Retry-After (waiting does not refill a quota). */
export default defineCheck({
  id: "quota-no-retry-after",
  clause: "limits.quota",
  applies: (ex) => ex.response.status === 429 && errorOf(ex)?.code === "INSUFFICIENT_QUOTA",
  run: (ex) => {
    const raw = header(ex, HEADERS.retryAfter);
    return raw === undefined ? [] : [{ expected: "no Retry-After on INSUFFICIENT_QUOTA", received: `Retry-After: ${raw}` }];
  },
});
