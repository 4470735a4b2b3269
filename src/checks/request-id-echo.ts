import { HEADERS, REQUEST_ID_PATTERN } from "../contract/index.js";
import { defineCheck, header } from "./define.js";

/** PROFILE §1: a well-formed X-Request-Id the client sent comes back as sent. */
export default defineCheck({
  id: "request-id-echo",
  clause: "transport.request-id-echo",
  applies: (ex) => REQUEST_ID_PATTERN.test(ex.request.headers[HEADERS.requestId] ?? ""),
  run: (ex) => {
    const sent = ex.request.headers[HEADERS.requestId];
    const got = header(ex, HEADERS.requestId);
    // no id at all is the request-id check's finding: one defect, one finding
    if (got === undefined) return [];
    return got === sent ? [] : [{ expected: "the client's X-Request-Id echoed", received: `sent ${sent}, got ${got}` }];
  },
});
