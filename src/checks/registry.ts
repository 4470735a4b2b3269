import type { ResponseCheck } from "./define.js";
import envelope from "./envelope.js";
import jsonContentType from "./json-content-type.js";
import no5xxOnInput from "./no-5xx-on-input.js";
import noKeyInResponse from "./no-key-in-response.js";
import noTokenField from "./no-token-field.js";
import noTokenValue from "./no-token-value.js";
import quotaNoRetryAfter from "./quota-no-retry-after.js";
import rateLimitHeaders from "./rate-limit-headers.js";
import requestId from "./request-id.js";
import requestIdEcho from "./request-id-echo.js";
import retryAfter from "./retry-after.js";
import statusPairing from "./status-pairing.js";
import successSchema from "./success-schema.js";
import updatedAfterCreated from "./updated-after-created.js";
import wwwAuthenticate from "./www-authenticate.js";

/** Every response-level check, each the default export of `src/checks/<id>.ts`; the client runs each applicable one on every response. */
export const RESPONSE_CHECKS: readonly ResponseCheck[] = [
  jsonContentType,
  requestId,
  requestIdEcho,
  envelope,
  successSchema,
  updatedAfterCreated,
  statusPairing,
  no5xxOnInput,
  rateLimitHeaders,
  retryAfter,
  quotaNoRetryAfter,
  wwwAuthenticate,
  noKeyInResponse,
  noTokenField,
  noTokenValue,
];
