import { spawn } from "node:child_process";

/** An `agent-harness serve` process the meta tests verify as a deployment: its base URL once ready, and a stop that waits for its exit. */
export async function serveProcess(args: string[]): Promise<{ baseUrl: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, ["bin/agent-harness.js", "serve", "--port", "0", ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  const baseUrl = await new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (http:\/\/\S+\/v1)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once("exit", (code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    baseUrl,
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
    },
  };
}
