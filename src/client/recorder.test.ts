import { execFileSync } from "node:child_process";
import { describe, expect, test } from "vitest";
import { bodyExcerpt, curlCommand, Redactor } from "./recorder.js";

const KEY = "ak_test_0123456789abcdef";
const OTHER = "ak_test_other_key_999999";
const redactor = new Redactor(KEY, [OTHER]);

/** What a shell makes of the command's words, with $AGENT_API_KEY set: proof the line is copy-pastable. */
function shellWords(command: string): string[] {
  const script = `set -- ${command.replace(/^curl /, "").replace(/ {2}# .*$/, "")}; for w in "$@"; do printf '%s\\0' "$w"; done`;
  const out = execFileSync("bash", ["--norc", "--noprofile", "-c", script], {
    env: { AGENT_API_KEY: KEY, PATH: process.env.PATH ?? "" },
  });
  return out.toString("latin1").split("\0").slice(0, -1);
}

describe("Redactor", () => {
  test.for([
    ["Bearer abc", "Bearer ***"],
    ["bearer  abc", "bearer  ***"],
    ["Bearer", "Bearer"],
    ["Bearer ", "Bearer "],
    ["", ""],
    [KEY, "***"],
    ["Basic dXNlcjpwYXNz", "Basic ***"],
  ] as const)("Authorization %j reads %j", ([value, expected]) => {
    expect(redactor.authorization(value)).toBe(expected);
  });

  test("replaces every secret in text and notices a leak", () => {
    const text = `{"echo":"${KEY}","other":"${OTHER}"}`;
    expect(redactor.leaks(text)).toBe(true);
    expect(redactor.text(text)).toBe('{"echo":"***","other":"***"}');
    expect(redactor.leaks(redactor.text(text))).toBe(false);
  });

  test("a body excerpt is redacted before it is cut: a key across the cut leaves none of itself", () => {
    const body = `${"x".repeat(2040)}${KEY}${"y".repeat(100)}`;
    const excerpt = bodyExcerpt(new TextEncoder().encode(body), redactor) ?? "";
    expect(excerpt).not.toContain(KEY.slice(0, 8));
    expect(excerpt).toMatch(/^x{2040}\*\*\*y{5}… \(2164 bytes\)$/);
  });

  test("does not redact everywhere a key too short to find safely", () => {
    const short = new Redactor("abc");
    expect(short.text("abcdef")).toBe("abcdef");
    expect(short.authorization("Bearer abc")).toBe("Bearer ***");
  });
});

describe("curlCommand", () => {
  test("reads another role's key from that role's variable, so a replay sends the same key", () => {
    const readOnly = new Redactor(OTHER, [KEY], "AGENT_API_READ_ONLY_KEY");
    const curl = curlCommand(
      { method: "GET", url: "http://127.0.0.1:8080/v1/agents", headers: { authorization: `Bearer ${OTHER}` } },
      readOnly,
    );
    expect(curl).toContain('authorization: Bearer \'"$AGENT_API_READ_ONLY_KEY"');
    expect(curl).not.toContain("$AGENT_API_KEY");
    expect(curl).not.toContain(OTHER);
  });

  test("reads the key from $AGENT_API_KEY and never holds it", () => {
    const curl = curlCommand(
      {
        method: "POST",
        url: "http://127.0.0.1:8080/v1/agents",
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
        body: Buffer.from(`{"name":"it's me","note":"${OTHER}"}`),
      },
      redactor,
    );
    expect(curl).not.toContain(KEY);
    expect(curl).not.toContain(OTHER);
    expect(curl).toContain('"$AGENT_API_KEY"');
    expect(shellWords(curl)).toEqual([
      "-sS",
      "-i",
      "--suppress-connect-headers",
      "--path-as-is",
      "--globoff",
      "-X",
      "POST",
      "http://127.0.0.1:8080/v1/agents",
      "-H",
      `authorization: Bearer ${KEY}`,
      "-H",
      "content-type: application/json",
      "--data-binary",
      `{"name":"it's me","note":"***"}`,
    ]);
  });

  test("a short key in the Authorization header still comes from the variable", () => {
    const curl = curlCommand(
      { method: "GET", url: "http://h/v1/agents", headers: { authorization: "Bearer k1" } },
      new Redactor("k1"),
    );
    expect(curl).toContain(`'authorization: Bearer '"$AGENT_API_KEY"`);
  });

  test("keeps paths as sent and says there is no Content-Type when none was sent", () => {
    const curl = curlCommand(
      { method: "POST", url: "http://h/v1/AGENTS/%7Eid/", headers: {}, body: Buffer.from("{}") },
      redactor,
    );
    const words = shellWords(curl);
    expect(words).toContain("http://h/v1/AGENTS/%7Eid/");
    expect(words).toContain("Content-Type:");
  });

  test("quotes bytes that are not UTF-8", () => {
    const curl = curlCommand(
      {
        method: "POST",
        url: "http://h/v1/agents",
        headers: { "content-type": "application/json" },
        body: Buffer.from([0x7b, 0xff, 0x27, 0x7d]),
      },
      redactor,
    );
    const words = shellWords(curl);
    expect(Buffer.from(words.at(-1) ?? "", "latin1")).toEqual(Buffer.from([0x7b, 0xff, 0x27, 0x7d]));
  });

  test("cuts a huge body and says so", () => {
    const curl = curlCommand(
      { method: "POST", url: "http://h/v1/agents", headers: {}, body: Buffer.alloc(70_000, 0x61) },
      redactor,
    );
    expect(curl).toMatch(/# body cut: 70000 bytes sent, first 16384 shown$/);
  });
});
