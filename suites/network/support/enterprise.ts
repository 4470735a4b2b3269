import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createServer as createTlsServer } from "node:tls";

/**
 * A corporate network, made for a test on 127.0.0.1: a CA of the test's own (openssl), a TLS
 * terminator in front of a plain-HTTP upstream (optionally demanding a client certificate
 * signed by that CA), and Debian's tinyproxy as the forward proxy, its log kept.
 */

/** PEM files of a CA, a server certificate for 127.0.0.1 signed by it, and a client certificate. */
export interface Pki {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

/** P-256 keys: made in milliseconds where RSA keys take seconds on a busy runner */
const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"];

export function makePki(): Pki {
  const dir = mkdtempSync(join(tmpdir(), "agent-harness-pki-"));
  const at = (name: string) => join(dir, name);
  writeFileSync(at("ext.cnf"), "[srv]\nsubjectAltName=IP:127.0.0.1\n[cli]\nextendedKeyUsage=clientAuth\n");
  const openssl = (args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe", timeout: 30_000 });
  openssl([
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=agent-harness test CA",
  ]);
  for (const [name, section] of [
    ["server", "srv"],
    ["client", "cli"],
  ] as const) {
    openssl(["req", ...EC_KEY, "-nodes", "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${name}`]);
    openssl(
      ["x509", "-req", "-in", `${name}.csr`, "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial"].concat([
        "-out",
        `${name}.pem`,
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
        "-extensions",
        section,
      ]),
    );
  }
  return {
    dir,
    ca: at("ca.pem"),
    serverCert: at("server.pem"),
    serverKey: at("server.key"),
    clientCert: at("client.pem"),
    clientKey: at("client.key"),
  };
}

/** A TLS terminator on 127.0.0.1 forwarding each connection to `upstreamPort`; `https://127.0.0.1:port`. */
export async function tlsTerminator(pki: Pki, upstreamPort: number, demandClientCert = false) {
  const server = createTlsServer(
    {
      cert: readFileSync(pki.serverCert),
      key: readFileSync(pki.serverKey),
      ...(demandClientCert ? { requestCert: true, rejectUnauthorized: true, ca: readFileSync(pki.ca) } : {}),
    },
    (socket) => {
      const upstream = connect(upstreamPort, "127.0.0.1");
      socket.pipe(upstream).pipe(socket);
      socket.on("error", () => upstream.destroy());
      socket.on("close", () => upstream.destroy());
      upstream.on("error", () => socket.destroy());
    },
  );
  server.on("tlsClientError", () => {}); // a client without the certificate is the test's point
  // close() waits for every connection to end, and one whose client went away mid-handshake, or
  // whose pipe is half-closed, may never end by itself (seen: a matrix run idle for 19 min after
  // its load burst): the terminator ends them all when it closes
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  const port = await listen(server);
  return {
    origin: `https://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (typeof address !== "object" || !address) throw new Error("no address");
  return address.port;
}

/** Why tinyproxy tests cannot run here, or undefined; under CI a missing binary is a failure, not a skip. */
export function tinyproxyMissing(): string | undefined {
  if (existsSync("/usr/bin/tinyproxy") || existsSync("/usr/sbin/tinyproxy")) return undefined;
  const reason = "tinyproxy is not installed (apt-get install -y tinyproxy; .ci/run installs it)";
  if (process.env.CI === "true") throw new Error(reason);
  return reason;
}

/** tinyproxy in the foreground on 127.0.0.1, logging every request; its URL, its log and a stop. */
export async function startTinyproxy() {
  const dir = mkdtempSync(join(tmpdir(), "agent-harness-tinyproxy-"));
  const log = join(dir, "tinyproxy.log");
  const port = await freePort();
  // no ConnectPort line: CONNECT to any port is allowed (the terminator's is not 443)
  writeFileSync(
    join(dir, "tinyproxy.conf"),
    [
      `Port ${port}`,
      "Listen 127.0.0.1",
      "Timeout 600",
      `LogFile "${log}"`,
      "LogLevel Info",
      "MaxClients 200",
      "Allow 127.0.0.1",
    ].join("\n"),
  );
  writeFileSync(log, "");
  execFileSync("chmod", ["777", dir, log]); // tinyproxy started as root writes its log as nobody
  const binary = existsSync("/usr/bin/tinyproxy") ? "/usr/bin/tinyproxy" : "/usr/sbin/tinyproxy";
  const child = spawn(binary, ["-d", "-c", join(dir, "tinyproxy.conf")], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  // ready once it accepts a connection (bounded: 50 tries over at most 10 s)
  for (let i = 0; ; i++) {
    if (await accepts(port)) break;
    if (i >= 50 || child.exitCode !== null) {
      if (child.exitCode === null) child.kill("SIGTERM"); // never left running behind the error
      throw new Error(`tinyproxy did not start: ${stderr}`);
    }
    await sleep(200);
  }
  return {
    url: `http://127.0.0.1:${port}`,
    log: () => readFileSync(log, "utf8"),
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  const port = await listen(server);
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}
