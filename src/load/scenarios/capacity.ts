import { CapacityDrive } from "../capacity/drive.js";
import { capacityFigures, floodsShortBecause, neighboursVerdicts } from "../capacity/tally.js";
import { InconclusiveError, type ScenarioContext } from "../context.js";
import { defineScenario } from "../define.js";

/**
 * Many tenants at their own rates: every key of `--keys-file` at a share of its buckets, an
 * open-model mix of every endpoint (streams included) on agents of its own. PROFILE §7: no
 * request under every bucket of its key, agent and account is refused, and no bucket admits
 * more than its size in a window; every answer conforms (the response checks, sampled).
 * noisy-neighbour: one tenant floods in the second half, in the shapes a runaway client takes
 * (src/load/capacity/floods.ts) one after another; during each the others' p99, unexpected refusals
 * and errors stay within a tolerance of the calm first half.
 */
async function capacity(ctx: ScenarioContext): Promise<void> {
  const options = ctx.options.capacity!;
  const drive = new CapacityDrive(ctx, options);
  ctx.recorder.tally = drive.tally;
  ctx.recorder.plannedPerSecond = drive.settings.offeredPerSecond;
  // the ledger judges each 429 by the drive's own requests alone: the run's earlier requests on a
  // tenant's account must first leave their windows. PROFILE §7: a window lasts W from its first
  // request, so W after the last of them (and a second: Reset is told in whole seconds) every
  // window they opened has ended, whatever the service's clock says
  if (drive.accountsSharedWithTheRun().length) await ctx.until(Date.now() + (ctx.target.windowSeconds + 1) * 1000);
  await drive.setUp();
  await drive.run();
  drive.judge();
  const figures = capacityFigures(drive.tally, drive.settings);
  ctx.recorder.capacity = figures;
  if (options.shard) ctx.recorder.capacityTally = { tally: drive.tally, settings: drive.settings };
  if (!figures.neighbours) return;
  for (const v of neighboursVerdicts(figures.neighbours))
    ctx.recorder.expect(v.ok, v.clause, v.check, v.expected, () => v.received);
  // a flood short of its intent proves nothing about the service: no pass (the findings above stand)
  const short = floodsShortBecause(figures.neighbours);
  if (short) throw new InconclusiveError(short);
}

export const CAPACITY = defineScenario({
  id: "capacity",
  title: "many tenants at a share of their buckets (open model): none refused under its limits, none admitted past them",
  clauses: ["limits.endpoint-bucket", "limits.agent-bucket", "limits.tier", "limits.concurrency", "message.stream"],
  latency: {
    note: "open-model arrivals: each answer's latency counts from when its request was due, not when it was sent (coordinated omission corrected); a stream's figure is its time to first byte",
    judged: true,
  },
  tenants: true,
  unavailable: (_target, options) =>
    options?.capacity ? undefined : "needs --keys-file (the tenants: accounts with tiers, keys with permissions)",
  estimateSeconds: (t, options) => (options?.capacity?.durationSeconds ?? 0) + t.windowSeconds + 2,
  run: capacity,
});
