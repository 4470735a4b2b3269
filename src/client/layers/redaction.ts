import { type Exchange, parseJson, TransportError } from "../exchange.js";
import { bodyExcerpt, curlCommand, type Redactor } from "../recorder.js";
import type { Layer, OutgoingRequest } from "./dispatch.js";

/**
 * PROFILE §6: keys never appear in a record. Below this layer the exchange is as sent and
 * received; above it every string is redacted, the curl line reads the key from
 * $AGENT_API_KEY, and any secret the target echoed is listed in `leaks`.
 */
export function redaction(redactor: Redactor): Layer {
  return (next) => async (request) => {
    // the curl line is read by a finding's evidence and a replay, a few exchanges of thousands:
    // made when first read, not for every request
    let made: string | undefined;
    const curl = () =>
      (made ??= curlCommand(
        { method: request.method, url: request.origin + request.path, headers: request.headers, body: request.body },
        redactor,
      ));
    const recorded = redactRequest(request, redactor);
    let outcome: Awaited<ReturnType<typeof next>>;
    try {
      outcome = await next(request);
    } catch (error) {
      if (error instanceof TransportError) throw new TransportError(error.kind, redactor.text(error.message), recorded, curl());
      throw error;
    }
    const raw = outcome.exchange;
    const leaks = [
      ...(redactor.leaks(raw.response.bodyText) ? ["body"] : []),
      ...Object.entries(raw.response.headers)
        .filter(([, value]) => redactor.leaks(value))
        .map(([name]) => `header:${name}`),
    ];
    const bodyText = redactor.text(raw.response.bodyText);
    const exchange: Exchange = {
      ...raw,
      request: recorded,
      response: {
        ...raw.response,
        headers: redactor.headers(raw.response.headers),
        bodyText,
        json: leaks.includes("body") && raw.response.json !== undefined ? parseJson(bodyText) : raw.response.json,
      },
      get curl() {
        return curl();
      },
      leaks,
    };
    return {
      ...outcome,
      exchange,
      ...(outcome.transportError !== undefined ? { transportError: redactor.text(outcome.transportError) } : {}),
    };
  };
}

function redactRequest(request: OutgoingRequest, redactor: Redactor): Exchange["request"] {
  const body = bodyExcerpt(request.body, redactor);
  return {
    method: request.method,
    url: redactor.text(request.origin + request.path),
    headers: redactor.headers(request.headers),
    ...(body !== undefined ? { body } : {}),
    bodyBytes: request.body?.byteLength ?? 0,
  };
}
