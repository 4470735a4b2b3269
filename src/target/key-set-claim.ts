import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Which key set of a run's pool a worker process owns, so parallel files never share a bucket or an
 * agent (a shared bucket would make one file's limit checks depend on another's requests). VITEST_POOL_ID cannot say: with several projects in one `vitest run` the
 * pool handed two live workers the same id. Each set has a claim file in `dir` holding its
 * owner's PID; a worker takes the first set whose file is missing or whose owner is dead. No
 * release is needed: a pool that kills a worker without an `exit` event leaves a claim whose PID
 * is dead, which the next worker takes over.
 */
export function claimKeySet(dir: string, count: number, pid = process.pid, isAlive = processIsAlive): number {
  mkdirSync(dir, { recursive: true });
  return withMutex(join(dir, ".mutex"), () => {
    const owners = Array.from({ length: count }, (_, i) => ownerOf(join(dir, `set-${i + 1}`)));
    // a set this process already holds (a module evaluated again in the same worker keeps its set)
    const mine = owners.indexOf(pid);
    const free = mine !== -1 ? mine : owners.findIndex((owner) => owner === undefined || !isAlive(owner));
    if (free === -1) throw new Error(`more parallel workers than the ${count} key sets of the run: lower --workers`);
    writeFileSync(join(dir, `set-${free + 1}`), String(pid));
    return free + 1;
  });
}

/**
 * The claims of one vitest run of the suites (a run, or one account lane of it), outside its report
 * folder: a directory named by the run's ledger file and the lane.
 */
export function claimDirFor(run: { ledgerFile: string; lane?: string }): string {
  const name = run.ledgerFile + (run.lane ?? "");
  return join(tmpdir(), "agent-harness-key-sets", createHash("sha256").update(name).digest("hex").slice(0, 16));
}

/** Deletes a run's claims once its workers have ended: each run would otherwise leave a directory behind in the temporary folder. */
export function releaseClaims(run: { ledgerFile: string; lane?: string }): void {
  rmSync(claimDirFor(run), { recursive: true, force: true });
}

function ownerOf(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, "utf8"));
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** `process.kill(pid, 0)` sends nothing: it throws ESRCH when no such process exists (EPERM: it exists). */
export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error instanceof Error && "code" in error && error.code === "EPERM";
  }
}

/** A mutex older than this was left by a process killed inside the few milliseconds it is held. */
const STALE_MUTEX_MS = 5_000;
const MUTEX_ATTEMPTS = 2_000;

/** Run `fn` holding an exclusive `mkdir` mutex (module evaluation is synchronous: so is this). */
function withMutex<T>(path: string, fn: () => T): T {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let attempt = 0; attempt < MUTEX_ATTEMPTS; attempt++) {
    try {
      mkdirSync(path);
    } catch {
      try {
        if (Date.now() - statSync(path).mtimeMs > STALE_MUTEX_MS) rmSync(path, { recursive: true, force: true });
      } catch {
        // released meanwhile
      }
      Atomics.wait(pause, 0, 0, 5);
      continue;
    }
    try {
      return fn();
    } finally {
      rmSync(path, { recursive: true, force: true });
    }
  }
  throw new Error(`could not take ${path} within ${MUTEX_ATTEMPTS} attempts`);
}
