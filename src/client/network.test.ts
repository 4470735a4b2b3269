import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import { rootCertificates } from "node:tls";
import { request } from "undici";
import { describe, expect, test } from "vitest";
import { networkAgent, networkHint, proxyProblem, proxyVariableFor, tlsOptionsOf } from "./network.js";

const error = (code: string, message = code, cause?: unknown) => Object.assign(new Error(message, { cause }), { code });

describe("the proxy variable a URL goes through, as curl reads them", () => {
  test.for([
    ["https://a.example/v1", { HTTPS_PROXY: "http://p:3128" }, "HTTPS_PROXY"],
    ["https://a.example/v1", { https_proxy: "http://p:1", HTTPS_PROXY: "http://p:2" }, "https_proxy"],
    ["http://a.example/v1", { HTTPS_PROXY: "http://p:3128" }, undefined],
    ["http://a.example/v1", { http_proxy: "http://p:3128" }, "http_proxy"],
    ["https://a.example/v1", { HTTPS_PROXY: "http://p", NO_PROXY: "example" }, undefined],
    ["https://a.example/v1", { HTTPS_PROXY: "http://p", NO_PROXY: ".example" }, undefined],
    ["https://a.example/v1", { HTTPS_PROXY: "http://p", NO_PROXY: "b.example,*" }, undefined],
    ["https://a.example/v1", { HTTPS_PROXY: "http://p", NO_PROXY: "notexample" }, "HTTPS_PROXY"],
    ["https://127.0.0.1:8443/v1", { HTTPS_PROXY: "http://p", NO_PROXY: "127.0.0.1:9000" }, "HTTPS_PROXY"],
    ["https://127.0.0.1:8443/v1", { HTTPS_PROXY: "http://p", NO_PROXY: "127.0.0.1:8443" }, undefined],
    // IP ranges, as curl reads them since 7.86
    ["http://10.1.2.3:8080/v1", { HTTP_PROXY: "http://p", NO_PROXY: "localhost,10.0.0.0/8" }, undefined],
    ["http://10.1.2.3:8080/v1", { HTTP_PROXY: "http://p", NO_PROXY: "10.1.2.0/25" }, undefined],
    ["http://10.1.2.200/v1", { HTTP_PROXY: "http://p", NO_PROXY: "10.1.2.0/25" }, "HTTP_PROXY"],
    ["http://11.0.0.1/v1", { HTTP_PROXY: "http://p", NO_PROXY: "10.0.0.0/8" }, "HTTP_PROXY"],
    ["https://[fd00::5]/v1", { HTTPS_PROXY: "http://p", no_proxy: "fd00::/8" }, undefined],
    ["https://[fe80::5]/v1", { HTTPS_PROXY: "http://p", no_proxy: "fd00::/8" }, "HTTPS_PROXY"],
    ["https://[::1]:8443/v1", { HTTPS_PROXY: "http://p", no_proxy: "::1" }, undefined],
    ["https://[::1]:8443/v1", { HTTPS_PROXY: "http://p", no_proxy: "[::1]:8443" }, undefined],
    ["https://[::1]:8443/v1", { HTTPS_PROXY: "http://p", no_proxy: "[::1]:9" }, "HTTPS_PROXY"],
    // a range matches addresses, never a name that happens to resolve into it
    ["http://ten.example/v1", { HTTP_PROXY: "http://p", NO_PROXY: "10.0.0.0/8" }, "HTTP_PROXY"],
  ] as const)("%s with %o: %s", ([url, env, expected]) => {
    expect(proxyVariableFor(url, env)).toBe(expected);
  });
});

describe("a connection that failed for the network's sake names what fixes it", () => {
  test.for([
    [error("UND_ERR_CONNECT", "x", error("SELF_SIGNED_CERT_IN_CHAIN")), {}, /--ca-file/],
    [error("UNABLE_TO_VERIFY_LEAF_SIGNATURE"), {}, /--ca-file/],
    [error("UND_ERR_SOCKET", "other side closed"), {}, /--client-cert/],
    [error("ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED", "alert certificate required"), {}, /--client-cert/],
    [error("ECONNREFUSED"), { HTTPS_PROXY: "http://127.0.0.1:9" }, /\$HTTPS_PROXY/],
    [new Error("Proxy response (403) !== 200 when HTTP Tunneling"), { https_proxy: "http://p" }, /\$https_proxy/],
  ] as const)("%s", ([err, env, hint]) => {
    expect(networkHint(err, "https://a.example/v1", env)).toMatch(hint);
  });

  test("the proxy's password is masked where the hint shows its URL", () => {
    const hint = networkHint(error("ECONNREFUSED"), "http://a.example/v1", { HTTP_PROXY: "http://puser:PROXYPASS@127.0.0.1:1" });
    expect(hint).toContain("http://puser:***@127.0.0.1:1");
    expect(hint).not.toContain("PROXYPASS");
  });

  test("a refused connection with no proxy in the way says nothing about the network's setup", () => {
    expect(networkHint(error("ECONNREFUSED"), "http://127.0.0.1:9/v1", {})).toBeUndefined();
  });
});

describe("the proxy variables a run can use, as curl reads them", () => {
  test.for([
    [{ HTTPS_PROXY: "proxy.corp:3128", NO_PROXY: "127.0.0.1" }, undefined],
    [{ http_proxy: "http://p:3128", HTTP_PROXY: "not a url" }, /^\$HTTP_PROXY \(not a url\) is not a proxy URL/],
    [{ HTTPS_PROXY: "socks5://p:1080" }, /^\$HTTPS_PROXY \(socks5:\/\/p:1080\): only http:\/\/ and https:\/\/ proxies/],
    [{ HTTP_PROXY: "ftp://u:secret@p:2121" }, /\(ftp:\/\/u:\*\*\*@p:2121\/\)/],
    [{ http_proxy: "" }, undefined],
    [{ NO_PROXY: "10.0.0.0/8, fd00::/8 ,.corp" }, undefined],
    [{ NO_PROXY: "localhost,10.0.0.0/33" }, /^\$NO_PROXY: 10\.0\.0\.0\/33 is not an IP range/],
    [{ no_proxy: "corp/8" }, /^\$NO_PROXY: corp\/8 is not an IP range/],
  ] as const)("%o: %s", ([env, problem]) => {
    if (problem === undefined) expect(proxyProblem(env)).toBeUndefined();
    else expect(proxyProblem(env)).toMatch(problem);
  });

  test("a proxy without a scheme is an http proxy, not undici's crash", async () => {
    let agent: ReturnType<typeof networkAgent> | undefined;
    expect(() => {
      agent = networkAgent(1, { HTTPS_PROXY: "proxy.corp:3128", HTTP_PROXY: "127.0.0.1:9" });
    }).not.toThrow();
    await agent?.close();
  });
});

describe("the dispatcher sends each origin where proxyVariableFor says", () => {
  /** A proxy that answers 502 to anything and counts what reached it (a CONNECT, or a request in absolute form). */
  async function countingProxy() {
    const reached: string[] = [];
    const server = createServer((req, res) => {
      reached.push(`${req.method} ${req.url}`);
      res.writeHead(502).end();
    });
    server.on("connect", (req: IncomingMessage, socket: Duplex) => {
      reached.push(`CONNECT ${req.url}`);
      socket.end("HTTP/1.1 502 Bad Gateway\r\n\r\n");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, reached, server };
  }
  const target = async () => {
    const server = createServer((_req, res) => res.end("direct"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server };
  };

  test.for([
    ["127.0.0.0/8", "direct"],
    ["10.0.0.0/8", "proxy"],
    ["127.0.0.1", "direct"],
    ["", "proxy"],
  ] as const)("NO_PROXY=%o: %s", async ([noProxy, expected]) => {
    const proxy = await countingProxy();
    const service = await target();
    const agent = networkAgent(1, { HTTP_PROXY: proxy.url, NO_PROXY: noProxy });
    try {
      const res = await request(service.url, { dispatcher: agent }).then(
        async (r) => `${r.statusCode} ${await r.body.text()}`,
        (err: unknown) => String(err),
      );
      if (expected === "direct") {
        expect(res).toBe("200 direct");
        expect(proxy.reached).toEqual([]);
      } else {
        expect(res).not.toBe("200 direct");
        expect(proxy.reached).toHaveLength(1);
      }
    } finally {
      await agent.destroy();
      proxy.server.close();
      service.server.close();
    }
  });
});

describe("the run's PEM files", () => {
  const dir = mkdtempSync(join(tmpdir(), "agent-harness-pem-"));
  const ca = join(dir, "ca.pem");
  writeFileSync(ca, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
  const notPem = join(dir, "x.txt");
  writeFileSync(notPem, "hello");

  test("--ca-file is added to the system's CAs, not put in their place", () => {
    const tls = tlsOptionsOf({ caFile: ca });
    expect(typeof tls === "object" && tls.ca?.length).toBe(rootCertificates.length + 1);
  });

  test.for([
    [{ caFile: join(dir, "missing.pem") }, /^--ca-file .*cannot read it \(ENOENT\)/],
    [{ caFile: notPem }, /^--ca-file .*not a PEM file/],
    [{ clientCert: ca }, /^--client-cert needs --client-key/],
    [{ clientKey: ca }, /^--client-key needs --client-cert/],
  ] as const)("%o: one line naming the flag", ([settings, message]) => {
    expect(tlsOptionsOf(settings)).toMatch(message);
  });

  test("a client key of another certificate is one line naming both flags, not an unreachable target later", () => {
    const pair = (name: string) => {
      execFileSync(
        "openssl",
        ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"].concat([
          "-keyout",
          `${name}.key`,
          "-out",
          `${name}.crt`,
          "-subj",
          `/CN=${name}`,
          "-days",
          "1",
        ]),
        { cwd: dir, stdio: "pipe", timeout: 30_000 },
      );
      return { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
    };
    const a = pair("a");
    const b = pair("b");
    expect(typeof tlsOptionsOf({ clientCert: a.cert, clientKey: a.key })).toBe("object");
    expect(tlsOptionsOf({ clientCert: a.cert, clientKey: b.key })).toMatch(
      /^--client-key .*b\.key: not the private key of --client-cert .*a\.crt \(.*\)$/,
    );
  });
});
