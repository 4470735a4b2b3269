import { describe, expect, test } from "vitest";
import { main } from "./main.js";

/** Bad `load` input: one readable line and exit 2, before any target starts. */
describe("agent-harness load usage", () => {
  test.for([
    [["--threshold", "p99~250"], /--threshold "p99~250"/],
    [["--threshold", "p99[5xx]<250"], /the outcome in \[\] is one of 2xx, 429, other/],
    [["--threshold", "errors[429]<1%"], /takes no \[outcome\]/],
    [["--scenario", "no-such"], /--scenario takes/],
    [["--base-url", "http://198.51.100.7/v1", "--api-key", "k"], /not a loopback address/],
    [["--base-url", "http://127.0.0.1:1/v1"], /--base-url needs --api-key/],
    // nothing listens on port 1: exit 2 before any scenario, not a verdict on the target
    [
      ["--base-url", "http://127.0.0.1:1/v1", "--api-key", "k", "--report-dir", "/tmp/agent-harness-load-test"],
      /target unreachable/,
    ],
  ] as const)("%j → exit 2", async ([args, message]) => {
    const written: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => written.push(String(chunk)) > 0) as typeof process.stderr.write;
    try {
      expect(await main(["load", ...args])).toBe(2);
    } finally {
      process.stderr.write = write;
    }
    expect(written.join("")).toMatch(message);
  });
});
