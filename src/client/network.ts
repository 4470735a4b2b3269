import { readFileSync } from "node:fs";
import { BlockList, isIP } from "node:net";
import { createSecureContext, rootCertificates } from "node:tls";
import { Agent, Dispatcher, ProxyAgent } from "undici";

/**
 * The network between the harness and a deployment: a corporate proxy, a TLS terminator with a
 * company CA, one that demands a client certificate. Every connection the harness opens with
 * undici goes through `networkAgent`, which honours HTTP_PROXY, HTTPS_PROXY and NO_PROXY (and
 * their lower-case forms) as curl does, IP ranges in NO_PROXY included, and adds the TLS material
 * the run was given. That material travels in environment variables so that the suites' worker
 * processes, which inherit the run's environment, connect exactly as the run does.
 */
export const NETWORK_ENV = {
  caFile: "AGENT_HARNESS_CA_FILE",
  clientCert: "AGENT_HARNESS_CLIENT_CERT",
  clientKey: "AGENT_HARNESS_CLIENT_KEY",
} as const;

export type NetworkSettings = Partial<Record<keyof typeof NETWORK_ENV, string>>;

/** The flag of each setting, for the one-line hints (the option table in src/run/config.ts uses the same). */
export const NETWORK_FLAGS = { caFile: "ca-file", clientCert: "client-cert", clientKey: "client-key" } as const;

/** The settings in `env` (the run's, or a worker's inherited copy). */
export function networkSettings(env: NodeJS.ProcessEnv = process.env): NetworkSettings {
  const out: NetworkSettings = {};
  for (const [name, variable] of Object.entries(NETWORK_ENV) as [keyof typeof NETWORK_ENV, string][]) {
    const value = env[variable];
    if (value) out[name] = value;
  }
  return out;
}

/** The run's settings put in the environment its workers inherit (absent ones left alone). */
export function exportNetworkSettings(settings: NetworkSettings, env: NodeJS.ProcessEnv = process.env): void {
  for (const [name, variable] of Object.entries(NETWORK_ENV) as [keyof typeof NETWORK_ENV, string][]) {
    const value = settings[name];
    if (value) env[variable] = value;
  }
}

/** PEM files read and checked: a message naming the flag when one cannot be used, else the TLS options. */
export function tlsOptionsOf(settings: NetworkSettings): { ca?: string[]; cert?: string; key?: string } | string {
  const read = (name: keyof typeof NETWORK_ENV, marker: RegExp): string => {
    const path = settings[name] ?? "";
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (err) {
      throw `--${NETWORK_FLAGS[name]} ${path}: cannot read it (${err instanceof Error && "code" in err ? err.code : String(err)})`;
    }
    if (!marker.test(text)) throw `--${NETWORK_FLAGS[name]} ${path}: not a PEM file (no ${marker.source} block)`;
    return text;
  };
  try {
    if (!!settings.clientCert !== !!settings.clientKey)
      return settings.clientCert
        ? "--client-cert needs --client-key (the certificate's private key)"
        : "--client-key needs --client-cert";
    const tls = {
      // added to Node's default trust, not replacing it: a proxy's or a public host's certificate still verifies
      ...(settings.caFile ? { ca: [...rootCertificates, read("caFile", /-----BEGIN CERTIFICATE-----/)] } : {}),
      ...(settings.clientCert ? { cert: read("clientCert", /-----BEGIN CERTIFICATE-----/) } : {}),
      ...(settings.clientKey ? { key: read("clientKey", /-----BEGIN [A-Z ]*PRIVATE KEY-----/) } : {}),
    };
    // a key of another certificate fails every handshake, which would read as an unreachable target
    if (tls.cert && tls.key)
      try {
        createSecureContext({ cert: tls.cert, key: tls.key });
      } catch (err) {
        throw `--client-key ${settings.clientKey}: not the private key of --client-cert ${settings.clientCert} (${err instanceof Error ? err.message : String(err)})`;
      }
    return tls;
  } catch (message) {
    if (typeof message === "string") return message;
    throw message;
  }
}

/** The proxy variables, in the order curl reads them for an https URL (an http URL reads the last two). */
const PROXY_VARIABLES = ["https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY"] as const;

/**
 * A proxy variable's value as a URL: without a scheme it is an http proxy, as curl reads it
 * (`proxy.corp:3128`); undici alone would refuse it with a stack of its own.
 */
function proxyUrl(value: string | undefined): string | undefined {
  if (!value) return undefined;
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
}

/** A proxy variable's value where a person reads it: its password, if any, masked. */
function shownProxy(value: string): string {
  try {
    const url = new URL(proxyUrl(value) ?? value);
    if (!url.password) return value;
    url.password = "***";
    return url.href;
  } catch {
    return value;
  }
}

/** NO_PROXY's value: the lower-case variable first, as curl reads it. */
const noProxyValue = (env: NodeJS.ProcessEnv): string => env.no_proxy ?? env.NO_PROXY ?? "";

/** An IP range in CIDR notation, as curl (7.86 and later) takes it in NO_PROXY: `10.0.0.0/8`, `fd00::/8`. */
const CIDR = /^([^/]+)\/(\d{1,3})$/;

/**
 * NO_PROXY read as curl reads it: `*` (every host), host names (a leading `.` or `*.` for the
 * whole domain; a host also matches its subdomains), `host:port`, IP addresses, and IP ranges in
 * CIDR notation, which node's BlockList matches. A range that is not one is the message.
 */
function readNoProxy(
  env: NodeJS.ProcessEnv,
): { every: boolean; ranges: BlockList; hosts: { host: string; port?: string }[] } | string {
  const out = { every: false, ranges: new BlockList(), hosts: [] as { host: string; port?: string }[] };
  for (const entry of noProxyValue(env)
    .split(/[,\s]+/)
    .filter(Boolean)) {
    if (entry === "*") out.every = true;
    const range = CIDR.exec(entry);
    if (range) {
      const [, address = "", bits = ""] = range;
      const family = isIP(address);
      const prefix = Number(bits);
      if (!family || prefix > (family === 4 ? 32 : 128))
        return `$NO_PROXY: ${entry} is not an IP range (give it as 10.0.0.0/8 or fd00::/8)`;
      out.ranges.addSubnet(address, prefix, family === 4 ? "ipv4" : "ipv6");
      continue;
    }
    // an IPv6 address is no host:port (`::1`); with a port it comes in brackets (`[::1]:8443`)
    const [host = "", port] = isIP(entry) ? [entry.toLowerCase()] : entry.toLowerCase().split(/:(?=\d+$)/);
    out.hosts.push({ host: host.replace(/^\[|\]$/g, "").replace(/^\*?\./, ""), ...(port ? { port } : {}) });
  }
  return out;
}

/**
 * A message naming the proxy variable the harness cannot use (not a URL once curl's default scheme
 * is added, or not an http(s) proxy), or NO_PROXY's range that is none, else undefined: checked
 * before a run, as the PEM files are.
 */
export function proxyProblem(env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const name of PROXY_VARIABLES) {
    const value = env[name];
    if (!value) continue;
    let url: URL;
    try {
      url = new URL(proxyUrl(value) ?? value);
    } catch {
      return `$${name} (${shownProxy(value)}) is not a proxy URL: give it as http://host:port`;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:")
      return `$${name} (${shownProxy(value)}): only http:// and https:// proxies are supported, not ${url.protocol}//`;
  }
  const noProxy = readNoProxy(env);
  return typeof noProxy === "string" ? noProxy : undefined;
}

/**
 * The harness's dispatcher: each origin goes straight to the service or through the proxy its
 * variable names, by `proxyVariableFor`, the one reading of the variables that the hints use too
 * (undici's EnvHttpProxyAgent reads NO_PROXY without IP ranges: a deployment on 10.1.2.3 under
 * `NO_PROXY=10.0.0.0/8` would have gone to the proxy). The choice is made once an origin.
 */
class ProxyRouter extends Dispatcher {
  readonly #direct: Agent;
  readonly #proxies = new Map<string, ProxyAgent>();
  readonly #byOrigin = new Map<string, Dispatcher>();

  constructor(
    private readonly options: Agent.Options & { requestTls?: ProxyAgent.Options["requestTls"] },
    private readonly env: NodeJS.ProcessEnv,
  ) {
    super();
    const { requestTls: _proxiedOnly, ...direct } = options;
    this.#direct = new Agent(direct);
  }

  #route(origin: string): Dispatcher {
    const variable = proxyVariableFor(origin, this.env);
    const uri = proxyUrl(variable ? this.env[variable] : undefined);
    if (!uri) return this.#direct;
    const known = this.#proxies.get(uri);
    if (known) return known;
    const proxy = new ProxyAgent({ ...this.options, uri });
    this.#proxies.set(uri, proxy);
    return proxy;
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const origin = String(options.origin);
    let to = this.#byOrigin.get(origin);
    if (!to) {
      to = this.#route(origin);
      this.#byOrigin.set(origin, to);
    }
    return to.dispatch(options, handler);
  }

  #every(): Dispatcher[] {
    return [this.#direct, ...this.#proxies.values()];
  }

  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    const closed = Promise.all(this.#every().map((d) => d.close())).then(() => {});
    if (!callback) return closed;
    closed.then(callback, callback);
  }

  override destroy(): Promise<void>;
  override destroy(err: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(err: Error | null, callback: () => void): void;
  override destroy(errOrCallback?: Error | null | (() => void), callback?: () => void): Promise<void> | void {
    const err = typeof errOrCallback === "function" ? null : (errOrCallback ?? null);
    const done = typeof errOrCallback === "function" ? errOrCallback : callback;
    const destroyed = Promise.all(this.#every().map((d) => d.destroy(err))).then(() => {});
    if (!done) return destroyed;
    destroyed.then(done, done);
  }
}

/** An undici dispatcher for the harness's requests: the proxy variables honoured, the run's TLS material added. */
export function networkAgent(connections: number, env: NodeJS.ProcessEnv = process.env): Dispatcher {
  const tls = tlsOptionsOf(networkSettings(env));
  // the CLI checked the files before the run; a worker that cannot read them is a harness error
  if (typeof tls === "string") throw new Error(tls);
  // the variables are read from `env` (the run's, or the one a test gives), once an origin
  return new ProxyRouter({ connections, connect: tls, requestTls: tls }, env);
}

/**
 * The proxy variable a request to `url` goes through (curl's order; an https URL falls back to
 * the http proxy, as undici does), unless NO_PROXY exempts the host.
 */
export function proxyVariableFor(url: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const { protocol, hostname, port } = new URL(url);
  const names = protocol === "https:" ? PROXY_VARIABLES : PROXY_VARIABLES.slice(2);
  // an empty lower-case variable gives way to the upper-case one
  const name = names.find((n) => env[n]);
  if (!name) return undefined;
  const noProxy = readNoProxy(env);
  // the CLI refused a NO_PROXY it cannot read before the run: here it exempts nothing
  if (typeof noProxy === "string") return name;
  if (noProxy.every) return undefined;
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const family = isIP(host);
  if (family && noProxy.ranges.check(host, family === 4 ? "ipv4" : "ipv6")) return undefined;
  const effectivePort = port || (protocol === "https:" ? "443" : "80");
  for (const entry of noProxy.hosts) {
    if (entry.port && entry.port !== effectivePort) continue;
    if (host === entry.host || host.endsWith(`.${entry.host}`)) return undefined;
  }
  return name;
}

const UNTRUSTED = new Set([
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_UNTRUSTED",
]);

/**
 * What fixes a connection that failed, naming the flag or variable, or undefined when the
 * failure says nothing about the network's setup. `error` is undici's (its `cause` is the socket's).
 */
export function networkHint(error: unknown, url: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const codes: string[] = [];
  const texts: string[] = [];
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if ("code" in e && typeof e.code === "string") codes.push(e.code);
    texts.push(e.message);
  }
  const text = texts.join(" ");
  const proxy = proxyVariableFor(url, env);
  if (codes.some((c) => UNTRUSTED.has(c)))
    return `the TLS certificate is signed by a CA this machine does not trust: give that CA with --ca-file PEM`;
  if (codes.includes("CERT_HAS_EXPIRED")) return "the TLS certificate has expired: the service's certificate must be renewed";
  if (codes.includes("ERR_TLS_CERT_ALTNAME_INVALID"))
    return "the TLS certificate does not name this host: use the host name the certificate was issued for in --base-url";
  if (
    /certificate required|alert handshake failure|ALERT_CERTIFICATE_REQUIRED|bad certificate/i.test(`${text} ${codes.join(" ")}`)
  )
    return "the service demands a client certificate: give it with --client-cert PEM --client-key PEM";
  // TLS 1.3: a server that wants a certificate the client did not send closes after the handshake
  if (new URL(url).protocol === "https:" && codes.includes("UND_ERR_SOCKET") && !networkSettings(env).clientCert)
    return "the service closed the TLS connection: if it demands a client certificate, give it with --client-cert PEM --client-key PEM";
  if (proxy && /Proxy response|tunnel|proxy/i.test(text))
    return `the proxy in $${proxy} refused or failed the connection: check $${proxy}, or exempt the host with $NO_PROXY`;
  if (proxy && codes.some((c) => ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ECONNRESET"].includes(c)))
    return `the request went through the proxy in $${proxy} (${shownProxy(env[proxy] ?? "")}): check it, or exempt the host with $NO_PROXY`;
  return undefined;
}
