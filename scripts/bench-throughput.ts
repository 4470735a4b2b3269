/**
 * GET throughput of the reference server against a plain node:http server answering the same
 * JSON, measured with autocannon in one run on this machine. Each server runs alone in its
 * own process while autocannon drives it from this one. Prints requests/s and ratios; no
 * thresholds (speed goals live here, not in tests).
 *
 *   npx tsx scripts/bench-throughput.ts [--seconds 5] [--connections 32]
 */
import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { PERMISSIONS } from "../src/contract/index.js";

const { values } = parseArgs({
  options: { seconds: { type: "string", default: "5" }, connections: { type: "string", default: "32" } },
});
const duration = Number(values.seconds);
const connections = Number(values.connections);

const PLAIN_SERVER = `
const body = JSON.stringify({ status: "ok" });
require("node:http").createServer((req, res) => {
  res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(body) });
  res.end(body);
}).listen(0, "127.0.0.1", function () { console.log("listening on http://127.0.0.1:" + this.address().port + "/v1"); });`;

/** Start a server process and resolve its base URL from the ready line. */
function start(args: string[]): Promise<{ baseUrl: string; child: ChildProcess }> {
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (http:\/\/\S+\/v1)/.exec(out);
      if (m) resolve({ baseUrl: m[1]!, child });
    });
    child.once("exit", (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await exited;
}

async function measure(title: string, url: string, headers: Record<string, string> = {}) {
  const result = await autocannon({ url, duration, connections, headers });
  const rps = result.requests.average;
  console.log(`${title.padEnd(48)} ${rps.toFixed(0).padStart(8)} req/s  p99 ${result.latency.p99} ms  non-2xx ${result.non2xx}`);
  return rps;
}

console.log(`autocannon: ${duration} s each, ${connections} connections, node ${process.version}`);

const plain = await start(["-e", PLAIN_SERVER]);
const base = await measure("plain node:http GET (same JSON)", plain.baseUrl.replace(/\/v1$/, "/health"));
await stop(plain.child);

const key = "bench-key-0123456789";
const keysFile = join(tmpdir(), `agent-harness-bench-keys-${process.pid}.json`);
// a huge tier and a 1 ms window so the authenticated path answers 200, not 429
writeFileSync(
  keysFile,
  JSON.stringify({
    accounts: [{ id: "bench", tierLimit: 1e9, messageQuota: null }],
    keys: [{ key, account: "bench", permissions: [...PERMISSIONS] }],
  }),
);
const ref = await start(["bin/agent-harness.js", "serve", "--port", "0", "--keys", keysFile, "--window-seconds", "0.001"]);
const created = await fetch(`${ref.baseUrl}/agents`, {
  method: "POST",
  headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
  body: JSON.stringify({ name: "bench" }),
});
const agentId = ((await created.json()) as { data: { id: string } }).data.id;
const health = await measure("reference GET /health (no auth)", ref.baseUrl.replace(/\/v1$/, "/health"));
const get = await measure("reference GET /v1/agents/{id} (auth + buckets)", `${ref.baseUrl}/agents/${agentId}`, {
  authorization: `Bearer ${key}`,
});
await stop(ref.child);

console.log(`ratio /health ÷ node:http:        ${(health / base).toFixed(2)}`);
console.log(`ratio GET agent ÷ node:http:      ${(get / base).toFixed(2)}`);
