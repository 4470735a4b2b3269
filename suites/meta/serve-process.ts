import { spawn } from "node:child_process";
import { untilReady } from "../../src/cli/ready-line.js";

/** An `agent-harness serve` process the meta tests verify as a deployment: its base URL once ready, and a stop that waits for its exit. */
export async function serveProcess(args: string[]): Promise<{ baseUrl: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, ["bin/agent-harness.js", "serve", "--port", "0", ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const { baseUrl } = await untilReady(child);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    baseUrl,
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
    },
  };
}
