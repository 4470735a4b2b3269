import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { type MatrixConfig, replayCommand, runConfig, sliceArbitrary, TARGETS } from "./matrix.js";

/**
 * The npm-test slice of the configuration matrix (the full one: `npm run matrix`): a few cheap
 * configurations drawn with a pinned seed, each a dry run and a run of the harness in a child
 * process against the embedded reference, the reference through `serve`, or the independent
 * server — held to: a conformant server → exit 0 and no finding; ran = the dry run's count; a
 * harness error → exit 2. Replay any row with the command its failure prints.
 */
const SEED = Number(process.env.AGENT_HARNESS_MATRIX_SEED ?? 20261128);
/** one row per target (the first each draws), so that every implementation is in every CI run */
const SLICE: MatrixConfig[] = TARGETS.map(
  (target) => fc.sample(sliceArbitrary(), { seed: SEED, numRuns: 50 }).find((c) => c.target === target)!,
);

describe(`matrix slice (seed ${SEED})`, { concurrent: true }, () => {
  test.for(
    SLICE.map(
      (config, i) => [`${config.target} ${config.keySet} ${config.network} ${config.sections?.join(",")}`, config, i] as const,
    ),
  )("%s", { timeout: 400_000 }, async ([, config, i]) => {
    const outcome = await runConfig(config, SEED + i);
    expect(outcome.broken, `${outcome.lastLine}\nreplay: ${replayCommand(outcome)}`).toEqual([]);
  });
});
