import "./testcontainers-env.js";
import type { Readable } from "node:stream";
import { GenericContainer, getContainerRuntimeClient, type StartedTestContainer, Wait } from "testcontainers";
import { keysFileSchema, singleKeyFile } from "../contract/index.js";
import { dockerCliUnavailableReason, ensureReferenceImage, type ReferenceImage } from "./image.js";
import { serverArgs } from "./process.js";
import { REFERENCE_TIER, type ReferenceServerOptions, type StartedReference } from "./types.js";

const KEYS_IN_CONTAINER = "/app/keys.json";
const STARTUP_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 5_000;
const LOG_TAIL_LINES = 40;

export interface StartedReferenceContainer extends StartedReference {
  containerId: string;
  image: ReferenceImage;
  /** from container create to the ready line, in ms (image build not included) */
  startupMs: number;
  /** the server's output so far (never holds a key: the server does not print keys given by file) */
  logs(): string[];
}

/**
 * Starts the reference server image with host networking on a free loopback port: the server
 * binds port 0 itself and its ready line says which (a port probed free here and bound a moment
 * later in the container could be taken by another process in between).
 */
export async function startReferenceContainer(options: ReferenceServerOptions = {}): Promise<StartedReferenceContainer> {
  const image = await ensureReferenceImage();
  const host = options.host ?? "127.0.0.1";
  const asked = options.port ?? 0;
  const ready = portFromReadyLine();
  const keys = options.keys !== undefined ? keysFileSchema.parse(options.keys) : singleKeyFile(REFERENCE_TIER);

  const logs: string[] = [];
  const started = performance.now();
  let container: StartedTestContainer;
  try {
    container = await new GenericContainer(image.name)
      // The daemon runs with --bridge=none: host networking is the only kind there is.
      .withNetworkMode("host")
      .withCommand(serverArgs(options, host, asked, KEYS_IN_CONTAINER))
      .withCopyContentToContainer([{ content: JSON.stringify(keys), target: KEYS_IN_CONTAINER, mode: 0o444 }])
      .withLogConsumer((stream) => collectLines(stream, logs, ready.onLine))
      .withWaitStrategy(Wait.forLogMessage(/listening on/))
      .withStartupTimeout(STARTUP_TIMEOUT_MS)
      .start();
  } catch (error) {
    const tail = logs.slice(-LOG_TAIL_LINES).join("\n");
    throw new Error(`reference container did not start: ${String(error)}\n--- container output ---\n${tail}`, {
      cause: error,
    });
  }
  const port = asked || (await ready.bound());
  const startupMs = Math.round(performance.now() - started);
  console.info(`[reference-container] ${container.getId().slice(0, 12)} ready on ${host}:${port} in ${startupMs} ms`);

  let closing: Promise<void> | undefined;
  return {
    baseUrl: `http://${host}:${port}/v1`,
    keys,
    containerId: container.getId(),
    image,
    startupMs,
    logs: () => [...logs],
    close() {
      closing ??= container.stop({ timeout: STOP_GRACE_MS, remove: true }).then(() => undefined);
      return closing;
    },
  };
}

/** The port the server's ready line names (`listening on http://host:port/v1`). */
const READY_LINE = /listening on \S+:(\d+)\//;

/**
 * The port the server bound, said by its ready line. The wait strategy saw the line on a stream
 * of its own; the log consumer's copy may come a moment later: the first such line it reads,
 * bounded by the startup timeout.
 */
function portFromReadyLine() {
  let said: (port: number) => void = () => {};
  const port = new Promise<number>((resolve) => {
    said = resolve;
  });
  return {
    onLine: (line: string) => {
      const match = READY_LINE.exec(line);
      if (match) said(Number(match[1]));
    },
    bound: async () => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("the reference container never said which port it bound")), STARTUP_TIMEOUT_MS);
      });
      try {
        return await Promise.race([port, late]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

function collectLines(stream: Readable, into: string[], onLine: (line: string) => void): void {
  let partial = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) onLine(line);
    into.push(...lines);
    if (into.length > 1000) into.splice(0, into.length - 1000);
  });
  stream.on("end", () => {
    if (partial !== "") into.push(partial);
  });
}

/** Why no container can be started here, or undefined when the Docker daemon answers. */
export async function dockerUnavailableReason(): Promise<string | undefined> {
  // The image is built with the docker CLI and run through testcontainers: both must reach it.
  const cli = await dockerCliUnavailableReason();
  if (cli !== undefined) return `the docker CLI cannot reach a daemon: ${cli}`;
  try {
    // resolves only once the daemon has answered an info request
    await getContainerRuntimeClient();
    return undefined;
  } catch (error) {
    return `testcontainers finds no container runtime: ${error instanceof Error ? error.message : String(error)}`;
  }
}
