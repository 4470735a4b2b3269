import { spawn } from "node:child_process";
import { untilReady } from "../../src/cli/ready-line.js";
import { onCpus } from "../../src/target/cores.js";

/**
 * An `agent-harness serve` process the meta tests verify as a deployment: its base URL once ready,
 * and a stop that waits for its exit. With `cpus`, it runs only on those (taskset), as a service
 * owner pins a deployment for `load --service-cores`.
 */
export async function serveProcess(
  args: string[],
  cpus?: readonly number[],
): Promise<{ baseUrl: string; stop: () => Promise<void> }> {
  const [file, argv] = onCpus(cpus, process.execPath, ["bin/agent-harness.js", "serve", "--port", "0", ...args]);
  const child = spawn(file, argv, { stdio: ["ignore", "pipe", "inherit"] });
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
