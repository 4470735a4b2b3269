import { ENDPOINTS } from "../contract/index.js";
import { defineCheck, errorOf } from "./define.js";

/**
 * PROFILE §3: a 5xx answer to client input is a defect, except the model and budget failures
 * of Send Message (§5: 500 MODEL_ERROR, 503 AGENT_UNAVAILABLE).
 */
export default defineCheck({
  id: "no-5xx-on-input",
  clause: "status.no-5xx-on-input",
  applies: (ex) => ex.response.status >= 500,
  run: (ex, ctx) => {
    const code = errorOf(ex)?.code;
    // Send Message may answer 500 or 503 with its own codes; with no readable code (a broken
    // envelope, the envelope check's finding) this check cannot tell, so it does not judge
    const mayBeAllowed = ctx.endpoint === ENDPOINTS.sendMessage && [500, 503].includes(ex.response.status);
    if (mayBeAllowed && typeof code !== "string") return [];
    const allowed =
      ctx.endpoint === ENDPOINTS.sendMessage &&
      ((ex.response.status === 500 && code === "MODEL_ERROR") || (ex.response.status === 503 && code === "AGENT_UNAVAILABLE"));
    return allowed
      ? []
      : [{ expected: "no 5xx for client input", received: `${ex.response.status} ${String(code ?? "")}`.trim() }];
  },
});
