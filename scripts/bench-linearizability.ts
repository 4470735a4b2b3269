/**
 * How many operations a second the linearizability checker (src/model/linearizability.ts) judges
 * on this machine: histories a correct service makes (src/model/agent-history.simulate.ts), of the
 * size the linearizable-history load scenario sends and larger, checked against the agent model.
 * Prints the median of 5 rounds per size. Usage: npx tsx scripts/bench-linearizability.ts
 */
import { agentHistoryModel } from "../src/model/agent-history.js";
import { simulatedAgentHistory } from "../src/model/agent-history.simulate.js";
import { checkLinearizable } from "../src/model/linearizability.js";

const SIZES = [
  { agents: 3, clients: 4, opsPerClient: 12 },
  { agents: 3, clients: 8, opsPerClient: 25 },
  { agents: 5, clients: 16, opsPerClient: 50 },
];
const ROUNDS = 5;
const SEEDS_PER_ROUND = 10;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

for (const size of SIZES) {
  const histories = Array.from({ length: SEEDS_PER_ROUND }, (_, i) => simulatedAgentHistory(i + 1, size));
  const operations = histories.reduce((n, h) => n + h.history.length, 0);
  const rates: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now();
    for (const { history, initial } of histories) {
      const verdict = checkLinearizable(history, agentHistoryModel(initial));
      if (verdict.linearizable !== true) throw new Error(`a correct history judged ${String(verdict.linearizable)}`);
    }
    rates.push(operations / ((performance.now() - started) / 1000));
  }
  console.log(
    `${size.agents} agents, ${size.clients} clients × ${size.opsPerClient} operations: ${Math.round(median(rates))} operations/s (median of ${ROUNDS} rounds of ${SEEDS_PER_ROUND} histories, ${operations} operations a round)`,
  );
}
