import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rootCertificates } from "node:tls";
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
