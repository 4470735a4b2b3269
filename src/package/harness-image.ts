import { createHash } from "node:crypto";
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  IMAGE_USER,
  imageLabels,
  type LocalImage,
  NODE_IN_IMAGE,
  run,
  sharedLibraries,
  writeNodeRootfs,
} from "../target/image.js";
import { installTarball, packTarball } from "./pack.js";

/**
 * The harness itself as a Docker image, for CI systems without Node: built locally like the
 * reference image (src/target/image.ts), `FROM scratch` with this machine's node binary and the
 * libraries it loads, plus the package installed from `npm pack` of this checkout. No registry
 * image is pulled; npm's registry (or its cache) supplies the run-time dependencies.
 *
 *   docker run --rm --network host -e AGENT_API_KEY agent-harness:local verify --base-url http://127.0.0.1:8080/v1
 */

const HARNESS_IMAGE = "agent-harness:local";
/** image label holding the hash of everything the image is made of */
const HARNESS_IMAGE_HASH_LABEL = "agent-harness.image.hash";
const APP_IN_IMAGE = "/app";
/** the working folder: reports/ goes here unless --report-dir says otherwise (mount it to keep them) */
const WORKDIR_IN_IMAGE = "/work";

export interface HarnessImage extends LocalImage {
  /** bytes of the .tgz the image installs */
  tarballBytes: number;
}

let pending: Promise<HarnessImage> | undefined;

/** Builds {@link HARNESS_IMAGE} unless an image of the same tarball, node and recipe exists. Once per process. */
export function ensureHarnessImage(
  options: { log?: (line: string) => void; installTimeoutMs?: number } = {},
): Promise<HarnessImage> {
  if (pending === undefined) {
    pending = buildIfChanged(options.log ?? ((line) => console.info(`[harness-image] ${line}`)), options.installTimeoutMs);
    // a failed build is retried by the next caller rather than cached
    pending.catch(() => {
      pending = undefined;
    });
  }
  return pending;
}

async function buildIfChanged(log: (line: string) => void, installTimeoutMs?: number): Promise<HarnessImage> {
  const started = performance.now();
  const context = await mkdtemp(join(tmpdir(), "agent-harness-harness-image-"));
  try {
    const packed = await packTarball(context);
    const nodeLibraries = await sharedLibraries(process.execPath);
    const dockerfile = dockerfileText(nodeLibraries);
    // npm pack writes fixed timestamps: the same sources give the same tarball
    const hash = createHash("sha256")
      .update(`${process.version} ${process.arch}\n`)
      .update(dockerfile)
      .update(nodeLibraries.join("\n"))
      .update(await readFile(packed.path))
      .digest("hex");
    const previous = await imageLabels(HARNESS_IMAGE);
    if (previous?.labels[HARNESS_IMAGE_HASH_LABEL] === hash) {
      const buildMs = Math.round(performance.now() - started);
      log(`reusing ${HARNESS_IMAGE} (hash ${hash.slice(0, 12)}), checked in ${buildMs} ms`);
      return { name: HARNESS_IMAGE, hash, built: false, buildMs, tarballBytes: packed.size };
    }

    const rootfs = join(context, "rootfs");
    // installed in place: the folder is the image's /app as it is
    const installed = await installTarball(packed.path, {
      dir: join(rootfs, APP_IN_IMAGE),
      ...(installTimeoutMs ? { timeoutMs: installTimeoutMs } : {}),
    });
    // native addons (vite's bundler, lightningcss, …) load libraries of their own
    const addonLibraries = await Promise.all(
      (await nativeAddons(join(installed.dir, "node_modules"))).map((addon) => sharedLibraries(addon)),
    );
    await writeNodeRootfs(rootfs, [...new Set([...nodeLibraries, ...addonLibraries.flat()])]);
    await mkdir(join(rootfs, WORKDIR_IN_IMAGE), { recursive: true });
    await chmod(join(rootfs, WORKDIR_IN_IMAGE), 0o1777);
    await writeFile(join(context, "Dockerfile"), `${dockerfile}LABEL ${HARNESS_IMAGE_HASH_LABEL}="${hash}"\n`);
    await writeFile(join(context, ".dockerignore"), "*.tgz\n");
    const dockerStarted = performance.now();
    await run("docker", ["build", "--tag", HARNESS_IMAGE, context]);
    const dockerMs = Math.round(performance.now() - dockerStarted);
    // the superseded image would otherwise pile up as a dangling one on every change
    if (previous !== undefined) await run("docker", ["image", "rm", previous.id]).catch(() => undefined);
    const buildMs = Math.round(performance.now() - started);
    log(
      `built ${HARNESS_IMAGE} (hash ${hash.slice(0, 12)}, node ${process.version}) in ${buildMs} ms: ` +
        `pack ${packed.packMs} ms, npm install ${installed.installMs} ms, docker build ${dockerMs} ms`,
    );
    return { name: HARNESS_IMAGE, hash, built: true, buildMs, tarballBytes: packed.size };
  } finally {
    await rm(context, { recursive: true, force: true });
  }
}

function dockerfileText(libraries: readonly string[]): string {
  const bin = `${APP_IN_IMAGE}/node_modules/agent-harness/bin/agent-harness.js`;
  return [
    "FROM scratch",
    "COPY rootfs/ /",
    // the copied loader has no ld.so.cache; point it at the folders the libraries came from
    `ENV LD_LIBRARY_PATH=${[...new Set(libraries.map((path) => dirname(path)))].join(":")} NODE_ENV=production HOME=/tmp`,
    `USER ${IMAGE_USER}`,
    `WORKDIR ${WORKDIR_IN_IMAGE}`,
    `ENTRYPOINT ["${NODE_IN_IMAGE}", "${bin}"]`,
    'CMD ["--help"]',
    "",
  ].join("\n");
}

/** Every native addon (`*.node`) under `dir`. */
async function nativeAddons(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith(".node"))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** The size of an image, in bytes, as the daemon reports it. */
async function imageSize(image: string): Promise<number> {
  const { stdout } = await run("docker", ["image", "inspect", "--format", "{{.Size}}", image]);
  return Number(stdout.trim());
}

// `npx tsx src/package/harness-image.ts` builds (or reuses) the image by hand, and CI's early build
// at the lowest CPU priority beside the tests: there the install, starved by both sides of npm test,
// took over 300 s twice (its CPU is what the tests leave), so it gets 8 of its 10 minutes
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const image = await ensureHarnessImage({ installTimeoutMs: 8 * 60_000 });
  console.log(JSON.stringify({ ...image, imageBytes: await imageSize(image.name) }));
}
