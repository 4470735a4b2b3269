/**
 * GET throughput of the reference server against a plain node:http server answering the same
 * JSON, measured with autocannon in one run on this machine. Prints requests/s and ratios;
 * no thresholds (speed goals live here, not in tests).
 *
 *   npx tsx scripts/bench-throughput.ts [--seconds 5] [--connections 32]
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { PERMISSIONS } from "../src/contract/index.js";
import { startReferenceServer } from "../src/target/embedded.js";

const { values } = parseArgs({ options: { seconds: { type: "string", default: "5" }, connections: { type: "string", default: "32" } } });
const duration = Number(values.seconds);
const connections = Number(values.connections);

async function measure(title: string, url: string, headers: Record<string, string> = {}) {
  const result = await autocannon({ url, duration, connections, headers });
  const rps = result.requests.average;
  console.log(`${title.padEnd(48)} ${rps.toFixed(0).padStart(8)} req/s  p99 ${result.latency.p99} ms  non-2xx ${result.non2xx}`);
  return rps;
}

const body = JSON.stringify({ status: "ok" });
const plain = createServer((_req, res) => {
  res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(body) });
  res.end(body);
});
await new Promise<void>((r) => plain.listen(0, "127.0.0.1", r));
const plainUrl = `http://127.0.0.1:${(plain.address() as AddressInfo).port}/health`;

const key = "bench-key-0123456789";
// a huge tier and window so the authenticated path answers 200, not 429
const ref = await startReferenceServer({
  keys: { accounts: [{ id: "bench", tierLimit: 1e9, messageQuota: null }], keys: [{ key, account: "bench", permissions: [...PERMISSIONS] }] },
  windowSeconds: 1e-3,
});
const created = await fetch(`${ref.baseUrl}/agents`, {
  method: "POST",
  headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
  body: JSON.stringify({ name: "bench" }),
});
const agentId = ((await created.json()) as { data: { id: string } }).data.id;

console.log(`autocannon: ${duration} s each, ${connections} connections, node ${process.version}`);
const base = await measure("plain node:http GET (same JSON)", plainUrl);
const health = await measure("reference GET /health (no auth)", ref.baseUrl.replace(/\/v1$/, "/health"));
const get = await measure("reference GET /v1/agents/{id} (auth + buckets)", `${ref.baseUrl}/agents/${agentId}`, {
  authorization: `Bearer ${key}`,
});
console.log(`ratio /health ÷ node:http:        ${(health / base).toFixed(2)}`);
console.log(`ratio GET agent ÷ node:http:      ${(get / base).toFixed(2)}`);
await ref.close();
plain.close();
