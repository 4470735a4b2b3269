import { type BodyOf, ENDPOINTS, type EndpointId, type EndpointSpec, endpointPath, matchEndpoint } from "../contract/index.js";
import { endpointLabel } from "../report/findings.js";

/**
 * Requests per connection in a pipelined burst (src/load/burst.ts): here, beside the requests'
 * shapes, so that a scenario's description can name it without loading autocannon.
 */
export const BURST_PIPELINING = 10;

/** One request shape a scenario sends: a row of the endpoint table with its path filled in. */
export interface LoadRequest {
  endpoint: EndpointId;
  method: EndpointSpec["method"];
  /** relative to the base URL, query included (`/agents/abc`, `/agents?limit=1`) */
  path: string;
  body?: unknown;
}

interface RequestParts<E extends EndpointId> {
  /** fills `:agentId`; required where the endpoint's path has it */
  agentId?: string;
  query?: Readonly<Record<string, string>>;
  /** typed by the endpoint's body schema; a `[<id>]` in a string is made unique per request (src/load/burst.ts) */
  body?: BodyOf<E>;
}

/** A request to `endpoint`, its method and path taken from the contract's endpoint table. */
export function requestTo<E extends EndpointId>(endpoint: E, parts: RequestParts<E> = {}): LoadRequest {
  const spec = ENDPOINTS[endpoint];
  if (spec.path.includes(":agentId") && parts.agentId === undefined)
    throw new Error(`${endpoint} addresses an agent: give its id`);
  const query = parts.query ? `?${new URLSearchParams(parts.query)}` : "";
  return {
    endpoint,
    method: spec.method,
    path: endpointPath(spec, parts.agentId) + query,
    ...(parts.body !== undefined ? { body: parts.body } : {}),
  };
}

/** Send Message to `agentId`. */
export const messageTo = (agentId: string, body: BodyOf<"sendMessage"> = { text: "hold a slot" }): LoadRequest =>
  requestTo("sendMessage", { agentId, body });

/** The label of a request's endpoint in every report (`GET /agents/{agentId}`): the report's. */
export const labelOf = (request: Pick<LoadRequest, "endpoint">): string => {
  const spec = ENDPOINTS[request.endpoint];
  return endpointLabel(spec.method, spec.path);
};

/** The label of the endpoint an absolute URL under `baseUrl` addresses; the report's reading of the URL when none. */
export function labelOfUrl(baseUrl: string, method: string, url: string): string {
  const spec = matchEndpoint(method, url, { baseUrl })?.spec;
  return spec ? labelOf({ endpoint: spec.id }) : endpointLabel(method, url);
}

/**
 * A message the target refuses at once (400: blank text) to `agentId`: PROFILE §7 counts it in the
 * agent's bucket and the account's tier whatever its outcome, so its headers read the buckets a
 * message counts in; it reaches no model and holds no slot past its answer.
 */
export const refusedMessageTo = (agentId: string): LoadRequest => messageTo(agentId, { text: "" });
