import { HEADERS } from "../contract/index.js";
import { defineCheck, header } from "./define.js";

/** PROFILE §1: every response carries X-Request-Id (request-id-echo: a well-formed client id comes back as sent). */
export default defineCheck({
  id: "request-id",
  clause: "transport.request-id",
  applies: () => true,
  run: (ex) => (header(ex, HEADERS.requestId) ? [] : [{ expected: "an X-Request-Id header", received: "none" }]),
});
