import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LoadRun } from "../../src/load/run-of-scenarios.js";
import { harnessExit } from "../meta/verify-run.js";
import { makePki, type Pki, tlsTerminator } from "../network/support/enterprise.js";

/**
 * The options of the matrix that need something of their own beside the target: a TLS terminator
 * with a company CA (and one demanding a client certificate), a remote-write receiver for
 * `--out prometheus-rw=…`, a capacity shard's arguments, and `load compare` run on a
 * load run's own report. Each is cheap and on 127.0.0.1.
 */

/** One PKI for the whole process: the CA is an RSA key, a second or so of openssl. */
let pki: Pki | undefined;

/** The target behind a TLS terminator signed by a CA of the matrix's own; `mutual` demands a client certificate. */
export async function tlsFront(baseUrl: string, mutual: boolean) {
  pki ??= makePki();
  const url = new URL(baseUrl);
  const terminator = await tlsTerminator(pki, Number(url.port), mutual);
  const args = ["--ca-file", pki.ca, ...(mutual ? ["--client-cert", pki.clientCert, "--client-key", pki.clientKey] : [])];
  return { baseUrl: `${terminator.origin}${url.pathname}`, args, close: terminator.close };
}

/**
 * A Prometheus remote-write endpoint that only counts what it is sent: the matrix asks that a
 * load run with `--out` sends while it runs, not what Prometheus makes of it (the live-metrics
 * meta test holds that, against a real Prometheus).
 */
export async function remoteWriteReceiver() {
  let writes = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.method === "POST") writes++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/api/v1/write`,
    writes: () => writes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The capacity shard's arguments over `keysFile`'s tenants: short, the first of two shards. */
export const shardArgs = (keysFile: string) => ["--keys-file", keysFile, "--duration", "6s", "--shard", "1/2"];

/**
 * `load compare` on a load run's own report: A/A (the run against itself) is exit 0; against the
 * same run with one scenario it drove marked skipped (other scenarios) it is exit 2. Each broken
 * promise in a sentence.
 */
export async function comparePromises(runDir: string): Promise<string[]> {
  const broken: string[] = [];
  const run = JSON.parse(readFileSync(join(runDir, "load.json"), "utf8")) as LoadRun; // cast: the file the run just wrote
  // A/A: 0 when every scenario it drove passed; else no verdict (2): a run that drove nothing, or
  // one whose scenario failed or was inconclusive, is no reference, even for itself
  const ran = run.scenarios.filter((s) => s.status !== "skipped");
  const expected = ran.length && ran.every((s) => s.status === "passed") ? 0 : 2;
  const same = await harnessExit(["load", "compare", runDir, runDir]);
  if (same.code !== expected)
    broken.push(`load compare of a run with itself (A/A) ended ${same.code}, not ${expected}: ${lastLineOf(same.output)}`);
  const first = run.scenarios.findIndex((s) => s.status !== "skipped");
  if (first < 0) return broken;
  const other = join(mkdtempSync(join(tmpdir(), "agent-harness-matrix-compare-")), "load.json");
  const scenarios = run.scenarios.map((s, i) => (i === first ? { ...s, status: "skipped" as const } : s));
  writeFileSync(other, JSON.stringify({ ...run, scenarios }));
  const mismatched = await harnessExit(["load", "compare", runDir, other]);
  if (mismatched.code !== 2)
    broken.push(`load compare of runs of other scenarios ended ${mismatched.code}, not 2: ${lastLineOf(mismatched.output)}`);
  return broken;
}

/** The last line of a run's output that is not blank: where a run says what it was. */
export const lastLineOf = (output: string) =>
  output
    .trim()
    .split("\n")
    .filter((l) => l.trim())
    .at(-1) ?? "";
