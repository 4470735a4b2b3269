import { codesOfStatus, isConformantPair, STATUS_CODES } from "../contract/index.js";
import { defineCheck, errorOf } from "./define.js";

/** PROFILE §3: each status carries only its own codes; no status outside the table. */
export default defineCheck({
  id: "status-pairing",
  masksAnswer: true,
  clause: "status.pairing",
  applies: (ex) => ex.response.status >= 400,
  run: (ex) => {
    const { status } = ex.response;
    const code = errorOf(ex)?.code;
    const allowed = codesOfStatus(status);
    if (!allowed)
      return [{ expected: `a status of the §3 table (${Object.keys(STATUS_CODES).join(", ")})`, received: String(status) }];
    if (typeof code === "string" && !isConformantPair(status, code))
      return [{ expected: `${status} with ${allowed.join(" or ")}`, received: `${status} with ${code}` }];
    return [];
  },
});
