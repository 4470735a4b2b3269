/**
 * `npm run bench`: is the reference server the bottleneck of a load run? In one
 * run on this machine, interleaved round by round so drift and neighbours hit every side alike:
 *   - the reference server's req/s on GET /v1/agents/{id} (authenticated, rate-limited with a
 *     large tier) and on POST /v1/agents (create),
 *   - a plain node:http server answering the very same bytes (status, headers, body),
 *   - fastify with no hook answering the same GET bytes: the framework's own floor, so the gap
 *     splits into fastify's share and the reference's (auth, buckets, hooks, headers),
 *   - autocannon's own ceiling against a raw TCP responder (no HTTP parsing on the server).
 * Each server runs alone in its own process; autocannon drives it from this one. On Linux with
 * `taskset`, the generator is pinned to the first CPU and every server to the second, so each
 * side gets the same core and the scheduler never puts a server and autocannon on one core.
 * Each round measures every side once, back to back; a ratio is taken within each round (the
 * two sides ran seconds apart, under the same neighbours) and the headline is the median of
 * those per-round ratios, with their range. Also printed: each server's CPU time per request
 * (from /proc: what req/s tends to on a busy machine). The last line is
 * `ratio GET agent ÷ node:http: 0.NN` (scripts read it).
 *
 *   npm run bench -- [--seconds 1] [--rounds 15] [--connections 32] [--no-pin] [--cpu-prof DIR]
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { PERMISSIONS } from "../src/contract/index.js";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "1" },
    rounds: { type: "string", default: "15" },
    connections: { type: "string", default: "32" },
    "no-pin": { type: "boolean", default: false },
    "cpu-prof": { type: "string" },
  },
});
const duration = Number(values.seconds);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
for (const [flag, n] of [
  ["--seconds", duration],
  ["--rounds", rounds],
  ["--connections", connections],
] as const)
  if (!Number.isFinite(n) || n <= 0 || (flag !== "--seconds" && !Number.isInteger(n))) {
    console.error(`bench: ${flag} must be a positive ${flag === "--seconds" ? "number" : "integer"}`);
    process.exit(2);
  }

/**
 * Pin the generator (this process) to CPU 0 and the servers to CPU 1 where `taskset` exists and
 * the machine has two CPUs or more: the same core for every side, and never one core for a
 * server and autocannon together.
 */
const pinned =
  !values["no-pin"] &&
  process.platform === "linux" &&
  (await import("node:os")).availableParallelism() >= 2 &&
  spawnSync("taskset", ["-a", "-pc", "0", String(process.pid)], { stdio: "ignore" }).status === 0;
const serverCommand = (args: string[]): [string, string[]] =>
  pinned ? ["taskset", ["-c", "1", process.execPath, ...args]] : [process.execPath, args];

/** A node:http server replaying one recorded answer per route (same status, headers, body). */
const REPLAY_SERVER = `
const answers = JSON.parse(process.env.ANSWERS);
require("node:http").createServer((req, res) => {
  const a = req.method === "POST" ? answers.create : answers.get;
  req.resume();
  req.on("end", () => { res.writeHead(a.status, a.headers); res.end(a.body); });
}).listen(0, "127.0.0.1", function () { console.log("listening on http://127.0.0.1:" + this.address().port + "/v1"); });`;

/**
 * fastify with no hook, answering GET with the same recorded bytes: the floor the framework
 * sets, so the report can say how much of the gap is fastify's and how much the reference's.
 */
const FASTIFY_SERVER = `
const answers = JSON.parse(process.env.ANSWERS);
const app = require("fastify")({ logger: false });
app.get("/v1/agents/:agentId", (req, reply) => { reply.code(answers.get.status).headers(answers.get.headers).send(answers.get.body); });
app.listen({ port: 0, host: "127.0.0.1" }).then(() => console.log("listening on http://127.0.0.1:" + app.server.address().port + "/v1"));`;

/** A TCP server that answers every request head with one fixed HTTP response, parsing nothing but the blank line. */
const RAW_SERVER = `
const reply = Buffer.from("HTTP/1.1 200 OK\\r\\ncontent-type: application/json\\r\\ncontent-length: 15\\r\\n\\r\\n{\\"status\\":\\"ok\\"}");
require("node:net").createServer((socket) => {
  let tail = "";
  socket.on("data", (chunk) => {
    const text = tail + chunk.toString("latin1");
    let at = 0, n = 0;
    while ((at = text.indexOf("\\r\\n\\r\\n", at)) !== -1) { n++; at += 4; }
    tail = text.slice(text.lastIndexOf("\\r\\n\\r\\n") + 4 || 0).slice(-3);
    for (let i = 0; i < n; i++) socket.write(reply);
  });
  socket.on("error", () => {});
}).listen(0, "127.0.0.1", function () { console.log("listening on http://127.0.0.1:" + this.address().port + "/v1"); });`;

/** Every server started, stopped when this process exits however it ends (a side failing to start included). */
const started: ChildProcess[] = [];
process.once("exit", () => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

/** Start a server process and resolve its base URL from the ready line. */
function start(args: string[], env: Record<string, string> = {}): Promise<{ baseUrl: string; child: ChildProcess }> {
  const [command, argv] = serverCommand(args);
  // taskset execs node in its own process, so the child's PID is the server's (for /proc)
  const child = spawn(command, argv, { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, ...env } });
  started.push(child);
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
  child.kill("SIGINT");
  await exited;
}

interface Shape {
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  requests?: autocannon.Request[];
}

/**
 * CPU time (user + system) a process has used, ms, from /proc (Linux): req/s depends on what else
 * runs on the machine, CPU per request much less, so it says where a server's time goes.
 */
function cpuMs(pid: number | undefined): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks at USER_HZ = 100
  } catch {
    return undefined;
  }
}

async function measure(
  shape: Shape,
  pid: number | undefined,
): Promise<{ rps: number; total: number; non2xx: number; cpuUs?: number }> {
  const before = cpuMs(pid);
  const result = await autocannon({ ...shape, duration, connections });
  const after = cpuMs(pid);
  const cpuUs = before !== undefined && after !== undefined ? ((after - before) * 1000) / result.requests.total : undefined;
  return {
    rps: result.requests.average,
    total: result.requests.total,
    non2xx: result.non2xx,
    ...(cpuUs !== undefined ? { cpuUs } : {}),
  };
}

/**
 * The measured answers must be admitted ones (200, 201), not 429s: PROFILE §7 fixes a key's Get
 * bucket at 60 and its Create bucket at 10 per window, and the shortest window the clock can tell
 * is 1 ms, so one key caps GET at 60,000/s and create at 10,000/s, under this machine's rates.
 * So the load is spread over KEYS keys of one account (a huge tier): GET cycles through them per
 * connection from a fixed list (autocannon builds those requests once: the generator's cost per
 * request stays the same as for the other sides), create takes them round-robin across all
 * connections. A side that still gets non-2xx answers is named in a WARNING line.
 */
const KEYS = 64;
const keys = Array.from({ length: KEYS }, (_, i) => `bench-key-${String(i).padStart(2, "0")}-0123456789`);
const keysFile = join(tmpdir(), `agent-harness-bench-keys-${process.pid}.json`);
writeFileSync(
  keysFile,
  JSON.stringify({
    accounts: [{ id: "bench", tierLimit: 1e9, messageQuota: null }],
    keys: keys.map((key) => ({ key, account: "bench", permissions: [...PERMISSIONS] })),
  }),
);
const authOf = (key: string) => ({ authorization: `Bearer ${key}` });
const auth = authOf(keys[0]!);
const createBody = JSON.stringify({ name: "bench" });
const profileArgs = values["cpu-prof"] ? ["--cpu-prof", "--cpu-prof-dir", values["cpu-prof"]] : [];
/** A reference server with the bench keys and a 1 ms window (the buckets run, and refill every ms). */
const startReference = () =>
  start([...profileArgs, "bin/agent-harness.js", "serve", "--port", "0", "--keys", keysFile, "--window-seconds", "0.001"]);
const ref = await startReference();
/** Create has its own process: the agents it makes (hundreds of thousands) stay out of GET's heap. */
const refCreate = await startReference();

/** Record the reference's answers, to replay them byte for byte from node:http. */
async function record(url: string, init: RequestInit) {
  const res = await fetch(url, init);
  const body = await res.text();
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    if (!["date", "connection", "keep-alive", "transfer-encoding"].includes(k)) headers[k] = v;
  });
  return { status: res.status, headers, body };
}
const createdAnswer = await record(`${ref.baseUrl}/agents`, {
  method: "POST",
  headers: { ...auth, "content-type": "application/json" },
  body: createBody,
});
const agentId = (JSON.parse(createdAnswer.body) as { data: { id: string } }).data.id;
const getAnswer = await record(`${ref.baseUrl}/agents/${agentId}`, { headers: auth });
const replay = await start(["-e", REPLAY_SERVER], { ANSWERS: JSON.stringify({ get: getAnswer, create: createdAnswer }) });
const bareFastify = await start(["-e", FASTIFY_SERVER], { ANSWERS: JSON.stringify({ get: getAnswer }) });
const raw = await start(["-e", RAW_SERVER]);

/** GET: one request per key, cycled by every connection (fixed buffers). */
const getRequests = keys.map((key) => ({ headers: authOf(key) }));
/** Create: the next key for every request, whichever connection sends it. */
let nextKey = 0;
const createRequests = [
  {
    setupRequest: (req: autocannon.Request): autocannon.Request => ({
      ...req,
      headers: { ...req.headers, ...authOf(keys[nextKey++ % KEYS]!) },
    }),
  },
];
const sides = {
  "reference GET /v1/agents/{id} (auth + buckets)": { url: `${ref.baseUrl}/agents/${agentId}`, requests: getRequests },
  "node:http GET, the same bytes": { url: `${replay.baseUrl}/agents/${agentId}`, requests: getRequests },
  "fastify GET, no hooks, the same bytes": { url: `${bareFastify.baseUrl}/agents/${agentId}`, requests: getRequests },
  "reference POST /v1/agents (create)": {
    url: `${refCreate.baseUrl}/agents`,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: createBody,
    requests: createRequests,
  },
  "node:http POST, the same bytes": {
    url: `${replay.baseUrl}/agents`,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: createBody,
    requests: createRequests,
  },
  "raw TCP responder (autocannon's ceiling)": { url: `${raw.baseUrl.replace(/\/v1$/, "")}/`, requests: getRequests },
} satisfies Record<string, Shape>;
type Side = keyof typeof sides;
const GET_REF: Side = "reference GET /v1/agents/{id} (auth + buckets)";
const GET_NODE: Side = "node:http GET, the same bytes";

console.log(
  `autocannon: ${duration} s per side, ${rounds} interleaved rounds, ${connections} connections, node ${process.version}, ` +
    (pinned ? "generator pinned to CPU 0, servers to CPU 1" : "not pinned"),
);
const samples = new Map<Side, number[]>();
const cpuSamples = new Map<Side, number[]>();
/** Answers and non-2xx answers per side over all rounds: the ratios are of admitted answers only. */
const answered = new Map<Side, { total: number; non2xx: number }>();
const serverOf: Record<Side, { child: ChildProcess }> = {
  "reference GET /v1/agents/{id} (auth + buckets)": ref,
  "node:http GET, the same bytes": replay,
  "fastify GET, no hooks, the same bytes": bareFastify,
  "reference POST /v1/agents (create)": refCreate,
  "node:http POST, the same bytes": replay,
  "raw TCP responder (autocannon's ceiling)": raw,
};
const order = Object.keys(sides) as Side[];
for (let round = 1; round <= rounds; round++) {
  // every other round runs the sides in reverse, so neither side of a pair always goes first
  for (const name of round % 2 ? order : [...order].reverse()) {
    const { rps, total, non2xx, cpuUs } = await measure(sides[name], serverOf[name].child.pid);
    const sum = answered.get(name) ?? { total: 0, non2xx: 0 };
    answered.set(name, { total: sum.total + total, non2xx: sum.non2xx + non2xx });
    samples.set(name, [...(samples.get(name) ?? []), rps]);
    if (cpuUs !== undefined) cpuSamples.set(name, [...(cpuSamples.get(name) ?? []), cpuUs]);
    const cpu = cpuUs !== undefined ? `  server CPU ${cpuUs.toFixed(1)} µs/req` : "";
    console.log(
      `round ${round}  ${name.padEnd(48)} ${rps.toFixed(0).padStart(8)} req/s${cpu}${non2xx ? `  non-2xx ${non2xx}` : ""}`,
    );
  }
}

/**
 * Side by side: the two GET servers share one core (pinned) and are driven at the same moment,
 * each by its own autocannon, so whatever else runs on the machine hits both at once. The
 * scheduler shares the core about evenly; work per CPU second is what sets each one's req/s,
 * and the CPU each used (from /proc) corrects for an uneven share.
 */
const sideBySide = { rps: [] as number[], cpu: [] as number[] };
if (pinned)
  for (let round = 1; round <= rounds; round++) {
    const pids = [ref.child.pid, replay.child.pid];
    const before = pids.map(cpuMs);
    const [a, b] = await Promise.all([
      autocannon({ ...sides[GET_REF], duration, connections }),
      autocannon({ ...sides[GET_NODE], duration, connections }),
    ]);
    const after = pids.map(cpuMs);
    const used = pids.map((_, i) => (after[i] ?? Number.NaN) - (before[i] ?? Number.NaN));
    const rps = a.requests.total / b.requests.total;
    // CPU per request, node:http ÷ reference
    const cpu = (used[1]! / b.requests.total) * (a.requests.total / used[0]!);
    sideBySide.rps.push(rps);
    if (Number.isFinite(cpu)) sideBySide.cpu.push(cpu);
    console.log(
      `side by side ${round}  GET reference ${a.requests.total} and node:http ${b.requests.total} answers in ${duration} s: ratio ${rps.toFixed(2)}, by CPU per request ${cpu.toFixed(2)}${a.non2xx ? `  non-2xx ${a.non2xx}` : ""}`,
    );
  }
await Promise.all([stop(ref.child), stop(refCreate.child), stop(replay.child), stop(bareFastify.child), stop(raw.child)]);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const m = (side: Side) => median(samples.get(side) ?? []);
/** The ratio of two sides within each round (measured back to back): median, lowest and highest. */
function paired(top: Side, bottom: Side, from = samples) {
  const t = from.get(top) ?? [];
  const b = from.get(bottom) ?? [];
  const ratios = t.map((x, i) => x / (b[i] ?? Number.NaN)).filter(Number.isFinite);
  const text = (x: number) => x.toFixed(2);
  return {
    median: median(ratios),
    range: ratios.length ? `${text(Math.min(...ratios))}–${text(Math.max(...ratios))} over ${ratios.length} rounds` : "no rounds",
  };
}
console.log("");
for (const side of order) console.log(`median ${side.padEnd(48)} ${m(side).toFixed(0).padStart(8)} req/s`);
for (const side of order)
  if (cpuSamples.has(side))
    console.log(`median CPU ${side.padEnd(48)} ${median(cpuSamples.get(side)!).toFixed(1).padStart(8)} µs/req (server)`);
if (cpuSamples.size) {
  const cpu = paired(GET_NODE, GET_REF, cpuSamples);
  console.log(
    `ratio CPU per GET node:http ÷ reference: ${cpu.median.toFixed(2)} (${cpu.range}; what req/s tends to when the machine is busy)`,
  );
}
for (const [side, { total, non2xx }] of answered)
  if (non2xx)
    console.log(
      `WARNING ${side}: ${non2xx} of ${total} answers were not 2xx (${((100 * non2xx) / total).toFixed(1)}%): its ratios are not of admitted answers alone`,
    );
const GET_FASTIFY: Side = "fastify GET, no hooks, the same bytes";
const framework = paired(GET_FASTIFY, GET_NODE);
const ours = paired(GET_REF, GET_FASTIFY);
console.log(`ratio bare fastify ÷ node:http (the framework's floor): ${framework.median.toFixed(2)} (${framework.range})`);
console.log(`ratio GET agent ÷ bare fastify (the reference's own work): ${ours.median.toFixed(2)} (${ours.range})`);
const ceiling = paired(GET_NODE, "raw TCP responder (autocannon's ceiling)");
console.log(`ratio node:http ÷ autocannon ceiling: ${ceiling.median.toFixed(2)} (${ceiling.range})`);
const create = paired("reference POST /v1/agents (create)", "node:http POST, the same bytes");
console.log(`ratio create ÷ node:http:          ${create.median.toFixed(2)} (${create.range})`);
if (sideBySide.rps.length) {
  const spread = (xs: number[]) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)} over ${xs.length} rounds`;
  console.log(
    `ratio GET agent ÷ node:http side by side on one core: ${median(sideBySide.rps).toFixed(2)} (${spread(sideBySide.rps)}); by CPU per request ${median(sideBySide.cpu).toFixed(2)} (${spread(sideBySide.cpu)})`,
  );
}
const get = paired(GET_REF, GET_NODE);
console.log(`ratio GET agent ÷ node:http, per round: ${get.range}`);
console.log(`ratio GET agent ÷ node:http: ${get.median.toFixed(2)}`);
