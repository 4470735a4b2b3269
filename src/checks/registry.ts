import type { ResponseCheck } from "./define.js";
import envelope from "./envelope.js";
import no5xxOnInput from "./no-5xx-on-input.js";
import { noKeyInResponse, noTokenField, noTokenValue } from "./no-secret-in-response.js";
import rateLimitHeaders from "./rate-limit-headers.js";
import { noRetryAfterOnQuota, retryAfterOn429 } from "./retry-after.js";
import statusPairing from "./status-pairing.js";
import { successSchema } from "./success-schema.js";
import jsonContentType from "./transport-json-content-type.js";
import { requestIdEcho, requestIdPresent } from "./transport-request-id.js";
import wwwAuthenticate from "./www-authenticate.js";

/** Every response-level check; the client runs each applicable one on every response. */
export const RESPONSE_CHECKS: readonly ResponseCheck[] = [
  jsonContentType,
  requestIdPresent,
  requestIdEcho,
  envelope,
  successSchema,
  statusPairing,
  no5xxOnInput,
  rateLimitHeaders,
  retryAfterOn429,
  noRetryAfterOnQuota,
  wwwAuthenticate,
  noKeyInResponse,
  noTokenField,
  noTokenValue,
];
