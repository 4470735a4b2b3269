import { expect, test } from "vitest";
import { main } from "./main.js";

/** What `run` writes to stderr, kept out of the test's output. */
async function stderrOf(run: () => Promise<number>) {
  const chunks: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string) => chunks.push(String(chunk)) > 0) as typeof process.stderr.write;
  try {
    return { code: await run(), written: chunks.join("") };
  } finally {
    process.stderr.write = write;
  }
}

// a number that is not one made every comparison false: the replay script printed "gone" and exit 0
test.for([
  [["--window", "60s"], /--window 60s: a number of seconds above 0/],
  [["--window", "0"], /--window 0: a number of seconds above 0/],
  [["--sent-at", "abc"], /--sent-at abc: a time in milliseconds/],
] as const)("judge %j → exit 2 in one line, before any answer is read", async ([args, message]) => {
  const { code, written } = await stderrOf(() =>
    main(["judge", "--check", "rate-limit-headers", "--url", "http://h/v1/agents", ...args]),
  );
  expect(code).toBe(2);
  expect(written).toMatch(message);
});

test("judge --help prints its usage, exit 0, reading no answer", async () => {
  const chunks: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string) => chunks.push(String(chunk)) > 0) as typeof process.stdout.write;
  try {
    expect(await main(["judge", "--help"])).toBe(0);
  } finally {
    process.stdout.write = write;
  }
  expect(chunks.join("")).toMatch(/^usage: .*agent-harness judge --check ID/);
});
