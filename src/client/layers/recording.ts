import type { Exchange } from "../exchange.js";
import type { Layer } from "./dispatch.js";

/** Hands every exchange (each retry attempt included) to `onExchange` as it completes. */
export function recording(onExchange: ((exchange: Exchange) => void) | undefined): Layer {
  return (next) => async (request) => {
    const outcome = await next(request);
    onExchange?.(outcome.exchange);
    return outcome;
  };
}
