import { describe, expect, test } from "vitest";
import { RESPONSE_CHECKS } from "../checks/registry.js";
import { parseCurlOutput, replayVerdict } from "./judge.js";

const CRLF = (lines: string[]) => lines.join("\r\n");
const UNAUTHORIZED_BODY = '{"success":false,"error":{"code":"UNAUTHORIZED","message":"no"}}';
/** A 401 without WWW-Authenticate (PROFILE §6 wants it): what the www-authenticate check finds. */
const BARE_401 = CRLF(["HTTP/1.1 401 Unauthorized", "content-type: application/json", "x-request-id: r1", "", UNAUTHORIZED_BODY]);
/** What curl -i prints through an https proxy without --suppress-connect-headers (replay scripts of earlier runs). */
const THROUGH_PROXY = `${CRLF(["HTTP/1.1 200 Connection established", "", ""])}${BARE_401}`;
const check = (id: string) => {
  const found = RESPONSE_CHECKS.find((c) => c.id === id);
  if (!found) throw new Error(`no check ${id}`);
  return found;
};
const request = (headers: Record<string, string> = {}) => ({
  method: "GET",
  url: "https://h.example/v1/agents",
  headers,
  windowSeconds: 60,
  idField: "id",
});

describe("a curl -i output read as the service's answer", () => {
  test("through an https proxy: the service's status and headers, not the proxy's 200 to CONNECT", () => {
    const answer = parseCurlOutput(THROUGH_PROXY);
    expect(answer?.status).toBe(401);
    expect(answer?.headers).toEqual({ "content-type": "application/json", "x-request-id": "r1" });
    expect(answer?.json).toMatchObject({ error: { code: "UNAUTHORIZED" } });
  });

  test("after an interim 100 Continue, and with LF line ends too", () => {
    const answer = parseCurlOutput(`HTTP/1.1 100 Continue\n\nHTTP/1.1 201 Created\ncontent-type: application/json\n\n{"a":1}`);
    expect(answer).toMatchObject({ status: 201, headers: { "content-type": "application/json" }, json: { a: 1 } });
  });

  test("the same verdict through the proxy as without it", () => {
    const www = check("www-authenticate");
    for (const raw of [BARE_401, THROUGH_PROXY]) {
      const answer = parseCurlOutput(raw);
      if (!answer) throw new Error("unread");
      expect(replayVerdict(www, request(), answer).code).toBe(1);
    }
  });
});

describe("a replay's verdict", () => {
  test("a 401 to a request that carried a key is 'cannot tell' (exit 2), never 'gone': the key was refused, nothing was judged", () => {
    const answer = parseCurlOutput(BARE_401.replace("x-request-id: r1", "x-request-id: r1\r\nwww-authenticate: Bearer"));
    if (!answer) throw new Error("unread");
    const verdict = replayVerdict(check("rate-limit-headers"), request({ authorization: "Bearer ***" }), answer);
    expect(verdict.code).toBe(2);
    expect(verdict.stdout).toBe("");
    expect(verdict.stderr).toMatch(/^judge: cannot tell: the service refused the request's key \(401 at GET .*\$AGENT_API_KEY/);
    // without a key the 401 is the answer to judge
    expect(replayVerdict(check("rate-limit-headers"), request(), answer).code).toBe(0);
    // the 401 check judges exactly that answer
    expect(replayVerdict(check("www-authenticate"), request({ authorization: "Bearer ***" }), answer)).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^gone: www-authenticate/),
    });
  });
});
