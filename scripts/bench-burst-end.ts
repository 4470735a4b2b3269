/**
 * How long a burst of the load scenarios takes from its first request to its result, against a
 * node:http server on this machine that answers at once: autocannon's bounded shot with its
 * default one-second sample tick, and with the 10 ms tick src/load/burst.ts gives it (autocannon
 * ends a bounded run at its next tick once every client is done). Both pipelined (2 connections ×
 * 10) and a connection per request (20), each the median of --rounds, interleaved round by round.
 *
 *   npx tsx scripts/bench-burst-end.ts [--rounds 5]
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import autocannon from "autocannon";

const { values } = parseArgs({ options: { rounds: { type: "string", default: "5" } } });
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 50) {
  process.stderr.write("bench-burst-end: --rounds takes a whole number from 1 to 50\n");
  process.exit(2);
}

const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => res.end("{}"));
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

/** One bounded shot of 20 requests: ms from start to autocannon's result. */
async function shot(connections: number, pipelining: number, sampleInt: number | undefined): Promise<number> {
  const started = performance.now();
  await new Promise<void>((resolve, reject) =>
    autocannon({ url, connections, pipelining, amount: 20, ...(sampleInt ? { sampleInt } : {}) }, (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  return performance.now() - started;
}

const shapes = [
  { name: "2 connections × 10 pipelined", connections: 2, pipelining: 10 },
  { name: "20 connections × 1", connections: 20, pipelining: 1 },
];
const ticks = [
  { name: "default tick (1 s)", sampleInt: undefined },
  { name: "10 ms tick", sampleInt: 10 },
];
const times = new Map<string, number[]>();
for (let round = 0; round < rounds; round++)
  for (const s of shapes)
    for (const t of ticks) {
      const key = `${s.name}, ${t.name}`;
      times.set(key, [...(times.get(key) ?? []), await shot(s.connections, s.pipelining, t.sampleInt)]);
    }
server.close();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
for (const [key, xs] of times) process.stdout.write(`${key}: median ${median(xs).toFixed(0)} ms of ${xs.length}\n`);
