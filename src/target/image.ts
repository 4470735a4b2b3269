import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { PACKAGE_ROOT } from "../run/package-root.js";

/**
 * The reference server as a Docker image, built locally and offline: a `FROM scratch` image
 * holding this machine's node binary, the shared libraries it links, and the bundled server.
 * Nothing is pulled from a registry.
 */

const execFileAsync = promisify(execFile);

const REFERENCE_IMAGE = "agent-harness-reference:local";
/** image label holding the hash of everything the image is made of */
const REFERENCE_IMAGE_HASH_LABEL = "agent-harness.reference.hash";

/**
 * The harness's folder (the nearest holding its package.json): a checkout, whose sources this file
 * may run from or a compiled tree inside it (.build/…), or the installed package (dist/src/target),
 * which has no build scripts and says so below
 */
const repoRoot = PACKAGE_ROOT;
const bundleScript = join(repoRoot, "scripts/bundle-server.mjs");
const SERVER_BUNDLE = join(repoRoot, ".build/server/server.mjs");

export const NODE_IN_IMAGE = "/usr/local/bin/node";
const SERVER_IN_IMAGE = "/app/server.mjs";
/** `nobody`: the server needs no privilege */
export const IMAGE_USER = "65534:65534";

/** An image this machine built (the reference server's, the harness's): rebuilt only when its hash changes. */
export interface LocalImage {
  name: string;
  /** sha256 of everything the image is made of (its files, the node version, the recipe) */
  hash: string;
  /** false when an image with the same hash was already there */
  built: boolean;
  /** time spent preparing, hashing and (when built) building, in ms */
  buildMs: number;
}

export type ReferenceImage = LocalImage;

export interface EnsureImageOptions {
  /** re-bundle src/cli/serve.ts first (default true; env AGENT_HARNESS_SKIP_BUNDLE=1 turns it off) */
  bundle?: boolean;
  log?: (line: string) => void;
}

let pending: Promise<ReferenceImage> | undefined;

/**
 * Builds {@link REFERENCE_IMAGE} unless an image with the same content hash exists. Once per
 * process: later calls share the first call's result.
 */
export function ensureReferenceImage(options: EnsureImageOptions = {}): Promise<ReferenceImage> {
  if (pending === undefined) {
    pending = buildIfChanged(options);
    // a failed build is retried by the next caller rather than cached
    pending.catch(() => {
      pending = undefined;
    });
  }
  return pending;
}

async function buildIfChanged(options: EnsureImageOptions): Promise<ReferenceImage> {
  const log = options.log ?? ((line: string) => console.info(`[reference-image] ${line}`));
  const started = performance.now();
  const bundle = options.bundle ?? process.env.AGENT_HARNESS_SKIP_BUNDLE !== "1";
  // the installed package has no build scripts and no esbuild: the reference image is a checkout's
  if (bundle && !existsSync(bundleScript))
    throw new Error(
      "the reference image is built from a checkout of agent-harness (scripts/bundle-server.mjs, esbuild); " +
        "from the installed package, verify the embedded target or a deployment (--base-url)",
    );
  if (bundle) await run(process.execPath, [bundleScript], { cwd: repoRoot });

  const server = await readFile(SERVER_BUNDLE).catch((cause: unknown) => {
    throw new Error(`no server bundle at ${SERVER_BUNDLE}; run \`npm run build\``, { cause });
  });
  const libraries = await sharedLibraries(process.execPath);
  const libraryDirs = [...new Set(libraries.map((path) => dirname(path)))];
  const dockerfile = dockerfileText(libraryDirs);
  const hash = createHash("sha256")
    .update(`${process.version} ${process.arch}\n`)
    .update(dockerfile)
    .update(libraries.join("\n"))
    .update(server)
    .digest("hex");

  const previous = await imageLabels(REFERENCE_IMAGE);
  if (previous?.labels[REFERENCE_IMAGE_HASH_LABEL] === hash) {
    const buildMs = Math.round(performance.now() - started);
    log(`reusing ${REFERENCE_IMAGE} (hash ${hash.slice(0, 12)}), checked in ${buildMs} ms`);
    return { name: REFERENCE_IMAGE, hash, built: false, buildMs };
  }

  const context = await mkdtemp(join(tmpdir(), "agent-harness-image-"));
  try {
    await writeRootfs(join(context, "rootfs"), libraries, server);
    await writeFile(join(context, "Dockerfile"), `${dockerfile}LABEL ${REFERENCE_IMAGE_HASH_LABEL}="${hash}"\n`);
    await run("docker", ["build", "--tag", REFERENCE_IMAGE, context]);
  } finally {
    await rm(context, { recursive: true, force: true });
  }
  // The superseded image would otherwise pile up as a dangling layer on every server change.
  if (previous !== undefined) await run("docker", ["image", "rm", previous.id]).catch(() => undefined);

  const buildMs = Math.round(performance.now() - started);
  log(`built ${REFERENCE_IMAGE} (hash ${hash.slice(0, 12)}, node ${process.version}) in ${buildMs} ms`);
  return { name: REFERENCE_IMAGE, hash, built: true, buildMs };
}

function dockerfileText(libraryDirs: string[]): string {
  return [
    "FROM scratch",
    "COPY rootfs/ /",
    // The copied loader has no ld.so.cache; point it at the directories the libraries came from.
    `ENV LD_LIBRARY_PATH=${libraryDirs.join(":")} NODE_ENV=production`,
    `USER ${IMAGE_USER}`,
    "WORKDIR /app",
    `ENTRYPOINT ["${NODE_IN_IMAGE}", "${SERVER_IN_IMAGE}"]`,
    "",
  ].join("\n");
}

async function writeRootfs(rootfs: string, libraries: string[], server: Buffer): Promise<void> {
  await writeNodeRootfs(rootfs, libraries);
  await mkdir(join(rootfs, "/app"), { recursive: true });
  await writeFile(join(rootfs, SERVER_IN_IMAGE), server);
  await chmod(join(rootfs, SERVER_IN_IMAGE), 0o644);
}

/**
 * The root file system every image of this repo starts from: this machine's node binary at
 * {@link NODE_IN_IMAGE}, the shared `libraries` it (and any native addon) loads, a writable /tmp,
 * and the users `root` and `nobody`.
 */
export async function writeNodeRootfs(rootfs: string, libraries: readonly string[]): Promise<void> {
  const into = (absolute: string) => join(rootfs, absolute);
  for (const dir of ["/usr/local/bin", "/etc", "/tmp"]) await mkdir(into(dir), { recursive: true });
  await chmod(into("/tmp"), 0o1777);
  // copyFile follows symlinks, so each library lands as a regular file at the path ldd named.
  await copyFile(process.execPath, into(NODE_IN_IMAGE));
  await chmod(into(NODE_IN_IMAGE), 0o755);
  for (const library of libraries) {
    await mkdir(dirname(into(library)), { recursive: true });
    await copyFile(library, into(library));
    await chmod(into(library), 0o755);
  }
  await writeFile(
    into("/etc/passwd"),
    "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n",
  );
  await writeFile(into("/etc/group"), "root:x:0:\nnogroup:x:65534:\n");
}

/** Absolute paths of the shared libraries `binary` loads, the dynamic loader included. */
export async function sharedLibraries(binary: string): Promise<string[]> {
  const { stdout } = await run("ldd", [binary]).catch((cause: unknown) => {
    throw new Error(`cannot list the shared libraries of ${binary} (is ldd installed?)`, { cause });
  });
  const libraries: string[] = [];
  for (const line of stdout.split("\n")) {
    // "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or "/lib64/ld-linux-x86-64.so.2 (0x...)";
    // linux-vdso has no file and is skipped.
    const match = /(?:=>\s*)?(\/\S+)\s+\(0x[0-9a-f]+\)/.exec(line);
    if (match?.[1] !== undefined) libraries.push(match[1]);
  }
  if (!libraries.some((path) => /\/ld-[^/]*\.so/.test(path)))
    throw new Error(`ldd ${binary} named no dynamic loader; a statically linked node is not supported:\n${stdout}`);
  return libraries;
}

export async function imageLabels(image: string): Promise<{ id: string; labels: Record<string, string> } | undefined> {
  try {
    const { stdout } = await run("docker", ["image", "inspect", "--format", "{{json .Id}} {{json .Config.Labels}}", image]);
    const [id, labels] = stdout
      .trim()
      .split(" ", 2)
      .map((part): unknown => JSON.parse(part));
    return { id: String(id), labels: stringRecord(labels) };
  } catch (error) {
    if (error instanceof CommandError && /no such image/i.test(error.stderr)) return undefined;
    throw error;
  }
}

/** Why the docker CLI cannot build here, or undefined when it reaches a daemon. */
export async function dockerCliUnavailableReason(): Promise<string | undefined> {
  try {
    await run("docker", ["version", "--format", "{{.Server.Version}}"]);
    return undefined;
  } catch (error) {
    return error instanceof CommandError ? error.stderr.trim() : String(error);
  }
}

class CommandError extends Error {
  constructor(
    readonly command: string,
    readonly stdout: string,
    readonly stderr: string,
    options: { cause?: unknown },
  ) {
    const tail = `${stdout}\n${stderr}`.trim().split("\n").slice(-30).join("\n");
    super(`\`${command}\` failed:\n${tail}`, options);
    this.name = "CommandError";
  }
}

export async function run(
  file: string,
  args: string[],
  options: { cwd?: string } = {},
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await execFileAsync(file, args, { ...options, maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    const field = (name: string) =>
      typeof error === "object" && error !== null && name in error ? String(Reflect.get(error, name) ?? "") : "";
    throw new CommandError([file, ...args].join(" "), field("stdout"), field("stderr") || field("message"), {
      cause: error,
    });
  }
}

// `npx tsx src/target/image.ts` builds (or reuses) the image by hand.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const image = await ensureReferenceImage();
  console.log(JSON.stringify(image));
}

/** Docker's labels: a JSON object of strings, or null when the image has none. */
function stringRecord(value: unknown): Record<string, string> {
  if (typeof value !== "object" || value === null) return {};
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v)]));
}
