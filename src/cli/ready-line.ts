import type { ChildProcessByStdio } from "node:child_process";
import type { Readable } from "node:stream";

/** The line `serve` prints once it answers (after the key it shows, if it made one): what a process waits for. */
export const readyLine = (baseUrl: string) => `listening on ${baseUrl}\n`;

/**
 * Wait for a `serve` process's ready line: its base URL, and all it printed by then (a key it
 * made comes first). A process that exits first rejects, with what it printed.
 */
export function untilReady(
  child: ChildProcessByStdio<null, Readable, Readable | null>,
): Promise<{ baseUrl: string; out: string }> {
  let out = "";
  return new Promise((ready, fail) => {
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (http:\/\/\S+\/v1)\n/.exec(out);
      if (m?.[1]) ready({ baseUrl: m[1], out });
    });
    child.once("exit", (code) => fail(new Error(`serve exited ${code} before its ready line: ${out}`)));
  });
}
