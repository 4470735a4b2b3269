/**
 * Memory per held stream: how much the generator (capacity's client: ScenarioContext.client, its
 * checks included) and the reference server (a process of its own) grow for each Send Message
 * stream they hold open, at N streams for each step.
 *
 *   node --expose-gc --import tsx scripts/bench-stream-memory.ts [--steps 50,200,500] [--samples 3]
 *
 * Each stream goes to an agent on `mock-timeout` (PROFILE §10: it never answers, so a stream is
 * held until its budget ends; `mock-slow` ends in about 2 s) with a budget longer than the bench:
 * held open, heartbeat comments only. PROFILE §7 caps each agent at 10 messages in flight, so a
 * step spreads its N streams over N / 10 fresh agents, one account and key each. A step opens
 * the N, waits until the server holds every one (a message refused before any model meets the
 * agent's full slots, or its bucket has counted them all), measures, then abandons them; a first
 * step of 10, not shown, warms both sides up. Heap and RSS are each side's median of `--samples`
 * readings after a full GC, minus the same before the step's streams were opened, over N.
 */
import { fork } from "node:child_process";
import { setMaxListeners } from "node:events";
import { loadavg } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { HEADERS, type KeysFile, keysFileSchema, MOCK_MODELS, RATE_LIMITS } from "../src/contract/index.js";
import { exampleTenants } from "../src/load/capacity/plan.js";
import { nextRequestId } from "../src/load/concurrency-checks.js";
import { ScenarioContext } from "../src/load/context.js";
import { LoadRecorder } from "../src/load/recorder.js";
import { refusedMessageTo } from "../src/load/requests.js";
import { startReferenceServer } from "../src/target/embedded.js";
import type { HarnessTarget } from "../src/target/harness-target.js";

/** A window and a budget far longer than any step: no bucket refills and no stream ends mid-step. */
const WINDOW_SECONDS = 3600;
const BUDGET_SECONDS = 1800;
const PER_AGENT = RATE_LIMITS.messageConcurrency;
/** A step's streams must all be counted within this long. */
const COUNTED_WITHIN_MS = 120_000;
/** Steps larger than this are refused: every stream is a socket on each side. */
const MAX_STREAMS = 2000;

type Memory = Pick<NodeJS.MemoryUsage, "heapUsed" | "rss">;
type ServerMessage = { baseUrl: string } | { memory: Memory };

/** Both sides' heap and RSS after a full collection. */
async function collected(): Promise<Memory> {
  if (!global.gc) throw new Error("run with node --expose-gc (see the usage line)");
  global.gc();
  await sleep(20);
  global.gc();
  const { heapUsed, rss } = process.memoryUsage();
  return { heapUsed, rss };
}

/** The server's side: a reference server in this process (tenants from the bench), measured when asked. */
async function serve(): Promise<void> {
  const tenants = await new Promise<KeysFile>((resolve) => process.once("message", (m) => resolve(keysFileSchema.parse(m))));
  const server = await startReferenceServer({
    keys: tenants,
    windowSeconds: WINDOW_SECONDS,
    messageTimeoutSeconds: BUDGET_SECONDS,
  });
  process.on("message", (m) => {
    if (m === "measure") void collected().then((memory) => process.send!({ memory }));
  });
  // the bench gone (ended or failed), the server goes too
  process.once("disconnect", () => void server.close().then(() => process.exit(0)));
  process.send!({ baseUrl: server.baseUrl });
}

async function bench(): Promise<void> {
  const { values } = parseArgs({
    options: { steps: { type: "string", default: "50,200,500" }, samples: { type: "string", default: "3" } },
  });
  const steps = values.steps.split(",").map((n) => Math.ceil(Number(n) / PER_AGENT) * PER_AGENT);
  const samples = Math.max(1, Math.min(9, Number(values.samples)));
  if (steps.some((n) => !(n > 0 && n <= MAX_STREAMS))) throw new Error(`--steps: each from 1 to ${MAX_STREAMS}`);
  // one account and key per agent of the largest step (a key creates one agent a step)
  const tenants = exampleTenants(Math.max(...steps) / PER_AGENT, 1, 100_000);
  const keys = tenants.keys.map((k) => k.key);

  const child = fork(import.meta.filename, ["--serve"], {
    execArgv: ["--import", "tsx", "--expose-gc"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const fromServer = <T>(pick: (m: ServerMessage) => T | undefined) =>
    new Promise<T>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the server exited ${code}`));
      const onMessage = (m: ServerMessage) => {
        const got = pick(m);
        if (got === undefined) return;
        child.off("message", onMessage);
        child.off("exit", onExit);
        resolve(got);
      };
      child.on("message", onMessage);
      child.once("exit", onExit);
    });
  const ready = fromServer((m) => ("baseUrl" in m ? m.baseUrl : undefined));
  child.send(tenants);
  const baseUrl = await ready;
  const serverMemory = () => {
    const answer = fromServer((m) => ("memory" in m ? m.memory : undefined));
    child.send("measure");
    return answer;
  };
  /** Each side's median heap and RSS over `samples` readings. */
  const measure = async () => {
    const readings: Array<{ generator: Memory; server: Memory }> = [];
    for (let i = 0; i < samples; i++) readings.push({ generator: await collected(), server: await serverMemory() });
    const median = (side: "generator" | "server", field: keyof Memory) =>
      readings.map((r) => r[side][field]).sort((a, b) => a - b)[Math.floor(readings.length / 2)]!;
    return {
      generator: { heapUsed: median("generator", "heapUsed"), rss: median("generator", "rss") },
      server: { heapUsed: median("server", "heapUsed"), rss: median("server", "rss") },
    };
  };

  const target: HarnessTarget = {
    kind: "external",
    baseUrl,
    keys: { main: keys[0]! },
    windowSeconds: WINDOW_SECONDS,
    messageTimeoutSeconds: BUDGET_SECONDS,
    referenceFaults: true,
    idField: "id",
    runPrefix: "ah-bench-memory-",
    ledgerFile: "/dev/null",
    seed: 1,
  };
  const recorder = new LoadRecorder(target, "stream-memory");
  const ctx = new ScenarioContext(target, recorder, new AbortController().signal);
  const kib = (bytes: number) => (bytes / 1024).toFixed(1);
  const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
  console.log(`node ${process.version}, load average ${loadAverage()} at the start`);
  console.log(
    "| streams | generator heap / stream | generator RSS / stream | server heap / stream | server RSS / stream | generator heap, RSS held | server heap, RSS held |",
  );
  console.log("|---|---|---|---|---|---|---|");
  try {
    // a first step of one agent's streams, not shown: code compiled and pools grown once are no stream's cost
    for (const [step, n] of [PER_AGENT, ...steps].entries()) {
      const owners = keys.slice(0, n / PER_AGENT);
      const agents = await Promise.all(
        owners.map(async (key) => ({
          key,
          id: (await ctx.createAgent(key, { modelSettings: { model: MOCK_MODELS.timeout } })).id,
        })),
      );
      // what an agent's message bucket holds before its streams: a refused message reads it (and is counted)
      const before = await Promise.all(agents.map(async (a) => (await probeOf(ctx, a.key, a.id)).remaining));
      const base = await measure();
      const abort = new AbortController();
      // every held stream listens to it
      setMaxListeners(n + PER_AGENT, abort.signal);
      const held = agents.flatMap((a) =>
        Array.from({ length: PER_AGENT }, () =>
          ctx
            .client(a.key)
            .streamMessage(
              a.id,
              { text: "hold" },
              { signal: abort.signal, headers: { [HEADERS.requestId]: nextRequestId() }, retry: false },
            ),
        ),
      );
      // every stream of an agent in flight: a probe meets its full slots (a 429 with room left in
      // its bucket, PROFILE §7), or its bucket has counted them all (before − its streams − the probes)
      const deadline = Date.now() + COUNTED_WITHIN_MS;
      for (const [i, a] of agents.entries()) {
        for (let probes = 2; ; probes++) {
          const probe = await probeOf(ctx, a.key, a.id);
          if (probe.status === 429 || probe.remaining <= before[i]! - PER_AGENT - probes + 1) break;
          if (Date.now() > deadline)
            throw new Error(`step ${n}: agent ${i}'s streams not all counted in ${COUNTED_WITHIN_MS} ms`);
          await sleep(250);
        }
      }
      const full = await measure();
      const per = (side: "generator" | "server", field: keyof Memory) => (full[side][field] - base[side][field]) / n;
      if (step > 0)
        console.log(
          `| ${n} | ${kib(per("generator", "heapUsed"))} KiB | ${kib(per("generator", "rss"))} KiB | ${kib(per("server", "heapUsed"))} KiB | ${kib(per("server", "rss"))} KiB | ${mib(full.generator.heapUsed)} MiB, ${mib(full.generator.rss)} MiB | ${mib(full.server.heapUsed)} MiB, ${mib(full.server.rss)} MiB |`,
        );
      abort.abort();
      await Promise.allSettled(held);
    }
  } finally {
    console.log(`load average ${loadAverage()} at the end`);
    await ctx.judged();
    child.disconnect();
  }
}

/**
 * A message refused before any model (an empty text) to an agent: its status and the Remaining
 * of the agent's message bucket. A 400 is counted in it; a 429 with room left in the bucket is
 * the agent's full slots (counted in none).
 */
async function probeOf(ctx: ScenarioContext, key: string, agentId: string): Promise<{ status: number; remaining: number }> {
  const answer = await ctx.single(key, refusedMessageTo(agentId));
  const remaining = answer.rate?.remaining;
  if (remaining === undefined) throw new Error(`a refused message answered ${answer.status} without X-RateLimit-Remaining`);
  if (answer.status === 429 && remaining === 0)
    throw new Error("an agent's message bucket ran out while its streams were counted");
  return { status: answer.status, remaining };
}

function loadAverage(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
}

if (process.argv[2] === "--serve") await serve();
else await bench();
