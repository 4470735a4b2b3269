export * from "./client.js";
export * from "./clock.js";
export * from "./exchange.js";
export * from "./parse-issues.js";
export * from "./rate.js";
export * from "./rate-budget.js";
export { CURL_KEY_VARIABLE, curlCommand, REDACTED, Redactor } from "./recorder.js";
export * from "./retry.js";
export * from "./sse.js";
