import { type Delay, type DelayProxy, formatDelay, type NetworkConditions, startDelayProxy } from "./delay-proxy.js";

/**
 * A started target moved behind a delaying proxy: its base URL is the proxy's, and stopping it
 * stops the proxy first. Only plain http: the proxy forwards bytes, and a TLS client that dials
 * 127.0.0.1 would check the certificate against the wrong name.
 */
export async function behindProxy<T extends { baseUrl: string }>(
  started: { target: T; stop: () => Promise<void> },
  conditions: NetworkConditions,
): Promise<{ target: T; stop: () => Promise<void>; proxy: DelayProxy }> {
  const url = new URL(started.target.baseUrl);
  if (url.protocol !== "http:") throw new Error(`the delaying proxy forwards plain http only, not ${url.protocol}`);
  const proxy = await startDelayProxy({ host: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port || 80) }, conditions);
  return {
    target: { ...started.target, baseUrl: proxy.urlFor(started.target.baseUrl) },
    proxy,
    stop: async () => {
      await proxy.close();
      await started.stop();
    },
  };
}

/** One line for the terminal: what stands between the harness and the service. */
export function describeNetwork(proxy: DelayProxy, upstream: string): string {
  const { up, down, closeAfterResponse, bufferResponses } = proxy.conditions;
  const roles = [closeAfterResponse && "closes after every response", bufferResponses && "buffers every response"].filter(
    Boolean,
  );
  return `network: a proxy at ${proxy.host}:${proxy.port} in front of ${new URL(upstream).host}, delaying requests ${formatDelay(up)} and responses ${formatDelay(down)}${roles.length ? `; it ${roles.join(" and ")}` : ""}`;
}

/**
 * The conditions `--network-delay` and `--network-proxy` set, without the proxy's address: what two
 * load runs must share for their figures to compare (load.json's target.network). Undefined: none.
 */
export function networkConditions(delay: Delay | undefined, roles: readonly string[] = []): string | undefined {
  if (!delay && !roles.length) return undefined;
  return [`${formatDelay(delay ?? { ms: 0, jitterMs: 0 })} each way`, ...roles].join(", ");
}
