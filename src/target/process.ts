import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { untilReady } from "../cli/ready-line.js";
import { keysFileSchema, singleKeyFile } from "../contract/index.js";
import { BIN_PATH } from "../run/package-root.js";
import { onCpus } from "./cores.js";
import { REFERENCE_TIER, type ReferenceServerOptions, type StartedReference } from "./types.js";

const STARTUP_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 5_000;

/**
 * The reference server as an `agent-harness serve` process of its own: what a load that floods it
 * needs, so that the generator and the service do not share one event loop (an in-process
 * reference and a storm starve each other, and the verdict would be the harness's own contention).
 * They share the machine's cores unless `cpus` gives the service some of its own (src/target/cores.ts);
 * the drive's headroom line says which.
 */
export async function startReferenceProcess(
  options: ReferenceServerOptions = {},
  cpus?: readonly number[],
): Promise<StartedReference & { pid: number }> {
  const keys = options.keys !== undefined ? keysFileSchema.parse(options.keys) : singleKeyFile(REFERENCE_TIER);
  const dir = mkdtempSync(join(tmpdir(), "agent-harness-serve-"));
  const keysPath = join(dir, "keys.json");
  writeFileSync(keysPath, JSON.stringify(keys), { mode: 0o600 });
  const argv = [BIN_PATH, "serve", ...serverArgs(options, options.host ?? "127.0.0.1", 0, keysPath)];
  const [command, args] = cpus ? onCpus(cpus, process.execPath, argv) : [process.execPath, argv];
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const timer = setTimeout(() => child.kill("SIGTERM"), STARTUP_TIMEOUT_MS);
  let baseUrl: string;
  try {
    ({ baseUrl } = await untilReady(child));
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  } finally {
    clearTimeout(timer);
  }
  // the ready line is all it says that we wait for: what it prints later is not read
  child.stdout.resume();
  const pid = child.pid;
  if (pid === undefined) throw new Error("the serve process has no pid");
  let closing: Promise<void> | undefined;
  return {
    baseUrl,
    keys,
    pid,
    close() {
      closing ??= (async () => {
        child.kill("SIGTERM");
        const grace = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
        await exited;
        clearTimeout(grace);
        rmSync(dir, { recursive: true, force: true });
      })();
      return closing;
    },
  };
}

/** `serve`'s arguments for these options, the keys read from `keysPath`. */
export function serverArgs(options: ReferenceServerOptions, host: string, port: number, keysPath: string): string[] {
  const args = ["--port", String(port), "--host", host, "--keys", keysPath];
  if (options.windowSeconds !== undefined) args.push("--window-seconds", String(options.windowSeconds));
  if (options.messageTimeoutSeconds !== undefined) args.push("--message-timeout-seconds", String(options.messageTimeoutSeconds));
  for (const fault of options.faults ?? []) args.push("--fault", fault);
  if (options.clockSkewSeconds) args.push("--clock-skew", String(options.clockSkewSeconds));
  return args;
}
