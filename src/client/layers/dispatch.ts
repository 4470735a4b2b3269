import type { EndpointId } from "../../contract/index.js";
import type { Exchange } from "../exchange.js";
import type { RateHeaders } from "../rate.js";
import type { RefusalDecision } from "../refusal.js";
import type { RetryPolicy } from "../retry.js";
import type { EventStreamCollector, SseEvent } from "../sse.js";

/**
 * The client is small layers around one transport, composed the way undici composes its
 * interceptors: a layer takes the next dispatch and returns a dispatch. Each layer is usable
 * alone (the load suite wraps its own traffic in recording and response checks).
 */
export interface OutgoingRequest {
  method: string;
  origin: string;
  /** path and query exactly as sent */
  path: string;
  /** the path below the client's base URL as the caller gave it; undefined for an absolute URL */
  relativePath?: string | undefined;
  /** as sent: not yet redacted */
  headers: Readonly<Record<string, string>>;
  body?: Uint8Array | undefined;
  /** the endpoint aimed at, when the caller knows it */
  endpoint?: EndpointId | undefined;
  agentId?: string | undefined;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** read the answer as an event stream when it is one; `onEvent` sees each event as it arrives */
  stream?: { onEvent?: ((event: SseEvent) => void) | undefined } | undefined;
  /** wait for the rate budget before sending (default true); false still counts the request */
  pace?: boolean | undefined;
  retry?: RetryPolicy | false | undefined;
  /** 1 for the first attempt; the retry layer counts on */
  attempt: number;
  /** called once the answer's status and headers have arrived (a stream's body comes later) */
  onHead?: ((head: ResponseHead) => void) | undefined;
}

interface ResponseHead {
  status: number;
  rate: RateHeaders | undefined;
  receivedAt: number;
}

export interface Outcome {
  exchange: Exchange;
  /** the event stream as read, when the answer was one */
  stream?: EventStreamCollector;
  /** the caller's signal ended the stream */
  aborted: boolean;
  /** the connection failed mid-stream */
  transportError?: string;
  /** the answer was a 429 the pacing did not expect: what it proves, or how long to wait (src/client/refusal.ts) */
  refusal?: RefusalDecision;
}

export type Dispatch = (request: OutgoingRequest) => Promise<Outcome>;
export type Layer = (next: Dispatch) => Dispatch;

/** `compose(a, b)(transport)` sends through a, then b, then the transport. */
export function compose(...layers: readonly Layer[]): (inner: Dispatch) => Dispatch {
  return (inner) => layers.reduceRight<Dispatch>((next, layer) => layer(next), inner);
}
